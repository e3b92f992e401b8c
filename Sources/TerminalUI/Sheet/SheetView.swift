import FormModel

/// Draws a sheet's chrome and fields into its frame, and says which cell is which control
/// (so a click can focus a field or press a button).
public struct SheetView: Sendable {
    public let state: SheetState
    public let frame: PresentationFrame
    /// Clickable rectangles, later ones on top.
    public private(set) var regions: [(rect: Rect, target: SheetFocus)] = []
    /// Where the field area is scrolled, as last drawn; keep it in ``SheetState/scroll`` so the next frame
    /// scrolls from there.
    public private(set) var scroll = SheetScroll()
    /// How many rows the last frame measured (the rows it drew, and those it passed to reach the focus).
    var measuredRows = 0
    /// Clickable options of choice and yes/no fields.
    public private(set) var options: [(rect: Rect, field: String, index: Int)] = []

    public init(state: SheetState, frame: PresentationFrame) {
        self.state = state
        self.frame = frame
    }

    /// Rows a popover needs for a page: per field its label, value (a line per choice when they do not
    /// fit side by side in a popover) and a space, and the key-hint row.
    public static func contentRows(of page: FormPage?) -> Int {
        let fields = page?.fields ?? []
        return fields.reduce(2) { rows, field in
            let choices = field.choices ?? []
            let sideBySide = choices.map { $0.label.text.count + 6 }.reduce(0, +) <= PresentationFrame.popoverColumns - 4
            if field.kind == .multilineText { return rows + 2 + multilineRows.lowerBound }
            return rows + 2 + (choices.isEmpty || sideBySide ? 1 : choices.count)
        }
    }

    /// The control under a cell, if any.
    public func target(column: Int, row: Int) -> SheetFocus? {
        regions.last { $0.rect.contains(column: column, row: row) }?.target
    }

    /// Draws the sheet (and the confirmation over it, when up).
    public mutating func draw(on screen: inout Screen) {
        let rect = frame.rect
        let form = state.form
        screen.clear(rect)
        screen.box(rect)
        if let arrow = frame.arrow { screen[arrow.column, arrow.row] = Cell(arrow.pointsUp ? "▲" : "▼") }
        regions = []
        options = []
        let inner = max(0, rect.width - 4)
        let left = rect.x + 2
        var row = rect.y + 1
        let cancel = " \(form.cancelLabel) "
        let done = " \(state.completionLabel) "
        button(cancel, .cancel, column: left - 1, row: row, on: &screen)
        button(done, .complete, column: rect.maxX - 1 - done.count, row: row, on: &screen, style: .bold)
        let room = max(0, inner - cancel.count - done.count - 2)
        let title = String(state.title.prefix(room))
        screen.write(title, column: left + cancel.count + (room - title.count) / 2, row: row, style: .bold)
        row += 1
        for column in rect.x + 1..<rect.maxX - 1 { screen[column, row] = Cell("─") }
        row += 1
        let hintRow = rect.maxY - 2
        if let note = state.note {
            // Whole and wrapped, but leaving the fields at least half of what is below it.
            let lines = Self.noteLines(note, width: inner, room: max(2, (hintRow - row) / 2))
            for (offset, line) in lines.enumerated() {
                screen.write(line, column: left, row: row + offset, style: offset == 0 ? .bold : [], limit: inner)
            }
            row += lines.count
            for column in rect.x + 1..<rect.maxX - 1 { screen[column, row] = Cell("─") }
            row += 1
        }
        if form.pages.count > 1 {
            let step = "Step \(state.page + 1) of \(form.pages.count)" + (form.pages[state.page].title.map { " · \(state.evaluated.text($0, at: ""))" } ?? "")
            screen.write(step, column: left, row: row, limit: inner)
            let problems = state.stepErrorCount
            if problems > 0 {
                screen.write(" ⚠ \(problems) to fix", column: left + step.count, row: row, style: [.bold, .destructive], limit: max(0, inner - step.count - 18))
            }
            var column = rect.maxX - 2
            if state.page < form.pages.count - 1 {
                column -= 8
                button(" Next › ", .next, column: column, row: row, on: &screen)
            }
            if state.page > 0 {
                column -= 9
                button(" ‹ Back ", .back, column: column, row: row, on: &screen)
            }
            row += 1
        }
        drawFields(from: row + 1, to: hintRow - 1, left: left, width: inner, on: &screen)
        let notice = state.notice.map { "\($0) · " } ?? ""
        let full = state.keyHints ?? "Tab next · Enter advance · Esc save & close · F1 keys"
        let hints = notice.count + full.count <= inner ? full : notice.count + 26 <= inner ? "Esc save & close · F1 keys" : "F1 keys"
        screen.write(notice + hints, column: left, row: hintRow, style: .reverse, limit: inner)
        if let dialog = state.dialog {
            drawConfirmation(dialog, on: &screen)
        }
    }

    /// The note's heading and its text wrapped to `width`, its paragraphs kept, in at most `room` lines (the
    /// last one ending in "…" when the text needs more).
    static func noteLines(_ note: (heading: String, text: String), width: Int, room: Int) -> [String] {
        var lines = TextWrap.lines(note.heading, width: width)
        for paragraph in note.text.split(separator: "\n", omittingEmptySubsequences: true) {
            lines += TextWrap.lines(String(paragraph), width: width)
        }
        guard lines.count > room, room > 0 else { return lines }
        var kept = Array(lines.prefix(room))
        kept[room - 1] = String(kept[room - 1].prefix(max(0, width - 1))) + "…"
        return kept
    }

    mutating func button(_ label: String, _ target: SheetFocus, column: Int, row: Int, on screen: inout Screen, style: CellStyle = []) {
        let focused = state.focus == target && !state.isAsking
        screen.write(label, column: column, row: row, style: focused ? style.union(.reverse) : style)
        regions.append((Rect(x: column, y: row, width: label.count, height: 1), target))
    }

    /// Lays the rows out in blocks (rows inside repeat instances indented) and scrolls so the focused one
    /// is visible; says when rows lie above ("↑ more") or below ("↓ more") what the sheet shows. Only the rows
    /// from the scroll position down to the bottom of the frame are measured (and the focused one when the
    /// sheet must scroll to it): a step of 5,000 repeat instances has 30,000 rows.
    mutating func drawFields(from top: Int, to bottom: Int, left: Int, width: Int, on screen: inout Screen) {
        let rows = state.visibleRows
        let available = max(0, bottom - top + 1)
        var measured: [Int: Int] = [:]
        func heightOf(_ index: Int) -> Int {
            if let known = measured[index] { return known }
            let row = rows[index]
            let value = height(of: row, width: width - 2 * row.depth)
            measured[index] = value
            return value
        }
        let position = Self.scrollPosition(rows: rows, focus: state.focus, from: state.scroll, available: available, height: heightOf)
        scroll = position
        var y = top - position.line
        var hiddenBelow = false
        var index = position.row
        while index < rows.count {
            let row = rows[index]
            let height = heightOf(index)
            defer {
                y += height
                index += 1
            }
            // A row partly scrolled past is not drawn.
            guard y >= top else { continue }
            // The space after a row may fall on the key-hint line; nothing drawn may. A row that does not fit
            // ends the drawing: every row after it starts lower still.
            guard y + height - 1 - trailingSpace(of: row) <= bottom else {
                hiddenBelow = true
                break
            }
            let indent = 2 * row.depth
            draw(row, row: y, left: left + indent, width: width - indent, on: &screen)
        }
        measuredRows = measured.count
        if position > SheetScroll() { screen.write(" ↑ more ", column: left + width - 8, row: top - 1, style: .bold) }
        // On the sheet's bottom edge, below the key hints.
        if hiddenBelow { screen.write(" ↓ more ", column: left + width - 8, row: bottom + 2, style: .bold) }
    }

    /// The blank lines at the end of ``height(of:width:)``: the space after a field or an Add button.
    func trailingSpace(of row: SheetRow) -> Int {
        switch row {
        case .field, .add: return 1
        case .repeatHeading, .instance: return 0
        }
    }

    /// Lines a row takes, the space after it included.
    func height(of row: SheetRow, width: Int) -> Int {
        switch row {
        case let .field(key, id, _, _):
            guard let field = state.definition(id: id) else { return 1 }
            return (field.kind == .note ? 1 : 1 + valueLineCount(field, at: key, width: width)) + (state.errors[key] == nil ? 0 : 1) + 1
        case .repeatHeading(let field, _, _):
            return state.errors[field.id] == nil ? 1 : 2
        case .instance: return 1
        case .add: return 2
        }
    }

    mutating func draw(_ row: SheetRow, row y: Int, left: Int, width: Int, on screen: inout Screen) {
        switch row {
        case let .field(key, id, _, _):
            if let field = state.definition(id: id) { drawField(field, at: key, row: y, left: left, width: width, on: &screen) }
        case let .repeatHeading(field, count, _):
            let noun = field.instanceNoun.text(in: state.language).lowercased()
            screen.write("\(field.label.text(in: state.language))\(field.required ? " *" : "") — \(count) \(noun)\(count == 1 ? "" : "s")", column: left, row: y, style: .bold, limit: width)
            if let error = state.errors[field.id] {
                screen.write("⚠ " + error, column: left, row: y + 1, style: [.bold, .destructive], limit: width)
            }
        case let .instance(prefix, title, _):
            let remove = " Remove "
            screen.write("▸ " + title, column: left, row: y, style: .bold, limit: max(0, width - remove.count - 1))
            button(remove, .removeInstance(prefix), column: left + max(0, width - remove.count), row: y, on: &screen, style: .destructive)
        case let .add(group, parent, noun, _):
            button(" + Add \(noun.lowercased()) ", .addInstance(group: group, parent: parent), column: left, row: y, on: &screen)
        }
    }

    /// How many lines ``valueLayout(_:at:width:)`` gives the field, without laying out the kinds that always
    /// take one: the sheet measures every row on each frame to scroll, and a record of a few hundred repeat
    /// instances has thousands of rows.
    func valueLineCount(_ field: FieldDefinition, at key: String, width: Int) -> Int {
        switch field.kind {
        case .singleChoice, .multipleChoice, .rank, .multilineText: return valueLayout(field, at: key, width: width).lines.count
        default: return 1
        }
    }

    /// Rows a multiline text field shows: at least three, growing with its text up to six.
    static let multilineRows = 3...6

    /// The value slot's lines, and where each option sits in them (line, first column, length) so a
    /// click can choose it: one line for most fields; choices side by side when they fit, else one per
    /// line; a text field as wide as the sheet; a multiline field on several lines.
    func valueLayout(_ field: FieldDefinition, at key: String, width: Int) -> (lines: [String], options: [(line: Int, start: Int, length: Int)]) {
        let focused = state.focus == .field(key) && !state.isAsking
        let items: [String]
        switch field.kind {
        case .boolean:
            let line: String
            if case .boolean(let on)? = state.answers[key] { line = on ? "[✓] Yes" : "[ ] No" } else { line = "[ ] —" }
            return ([line], [(0, 0, line.count)])
        case .singleChoice:
            let chosen: String? = { if case .choice(let value)? = state.answers[key] { return value } else { return nil } }()
            items = state.choices(at: key).map { (($0.value == chosen) ? "(•) " : "( ) ") + state.evaluated.text($0.label, at: key) }
        case .multipleChoice:
            let chosen: [String] = { if case .choices(let values)? = state.answers[key] { return values } else { return [] } }()
            let cursor = state.choiceCursor[key] ?? 0
            items = state.choices(at: key).enumerated().map { index, choice in
                (focused && index == cursor ? "›" : "") + (chosen.contains(choice.value) ? "[x] " : "[ ] ") + state.evaluated.text(choice.label, at: key)
            }
        case .rank:
            // Each choice shows its place in the order ([2]), Space places the one under the cursor next or takes it out.
            let placed: [String] = { if case .choices(let values)? = state.answers[key] { return values } else { return [] } }()
            let cursor = state.choiceCursor[key] ?? 0
            items = state.choices(at: key).enumerated().map { index, choice in
                let place = placed.firstIndex(of: choice.value).map { "[\($0 + 1)] " } ?? "[ ] "
                return (focused && index == cursor ? "›" : "") + place + state.evaluated.text(choice.label, at: key)
            }
        case .multilineText:
            let room = max(3, width - 2)
            var wrapped: [String] = []
            for paragraph in state.text(of: field, at: key).split(separator: "\n", omittingEmptySubsequences: false) {
                var rest = Substring(paragraph)
                repeat {
                    wrapped.append(String(rest.prefix(room)))
                    rest = rest.dropFirst(room)
                } while !rest.isEmpty
            }
            if wrapped.last?.count == room { wrapped.append("") }
            let rows = min(max(wrapped.count, Self.multilineRows.lowerBound), Self.multilineRows.upperBound)
            let shown = Array(wrapped.suffix(rows)) + Array(repeating: "", count: max(0, rows - wrapped.count))
            let cursorLine = min(wrapped.count, rows) - 1
            let lines = shown.enumerated().map { index, text in
                let more = index == 0 && wrapped.count > rows ? "…" : " "
                return more + text.padding(toLength: room, withPad: " ", startingAt: 0).prefix(room) + (focused && index == cursorLine ? "▏" : " ")
            }
            return (lines.map { String($0) }, [])
        default:
            let text = state.text(of: field, at: key).replacingOccurrences(of: "\n", with: "⏎")
            let room = max(3, width) - 2
            let shown = text.count >= room ? "…" + String(text.suffix(room - 2)) : text
            return (["[" + shown.padding(toLength: room - 1, withPad: " ", startingAt: 0) + (focused ? "▏" : " ") + "]"], [])
        }
        let joined = items.joined(separator: "  ")
        if joined.count <= width {
            var start = 0
            var options: [(line: Int, start: Int, length: Int)] = []
            for item in items {
                options.append((0, start, item.count))
                start += item.count + 2
            }
            return ([joined], options)
        }
        let lines = items.enumerated().map { "\($0.offset + 1) \($0.element)" }
        return (lines, lines.enumerated().map { ($0.offset, 0, $0.element.count) })
    }

    mutating func drawField(_ field: FieldDefinition, at key: String, row: Int, left: Int, width: Int, on screen: inout Screen) {
        if field.kind == .note {
            screen.write("ℹ " + state.evaluated.text(field.label, at: key), column: left, row: row, limit: width)
            return
        }
        var label = state.evaluated.text(field.label, at: key) + (field.required ? " *" : "")
        if let hint = field.hint { label += " — \(state.evaluated.text(hint, at: key))" }
        if field.choicesFrom != nil, field.kind == .singleChoice || field.kind == .multipleChoice {
            // The search typed into an entity choice, and how to use it.
            let search = state.entitySearch[key] ?? ""
            let how = field.kind == .multipleChoice ? "  (type to search, Enter ticks)" : "  (type to search)"
            label += search.isEmpty ? (state.focus == .field(key) ? how : "") : "  ⌕ \(search)▏"
        }
        screen.write(label, column: left, row: row, limit: width)
        let focused = state.focus == .field(key) && !state.isAsking
        let layout = valueLayout(field, at: key, width: width)
        for (offset, line) in layout.lines.enumerated() {
            screen.write(line, column: left, row: row + 1 + offset, style: focused ? .reverse : .underline, limit: width)
        }
        regions.append((Rect(x: left, y: row, width: width, height: 1 + layout.lines.count), .field(key)))
        for (index, option) in layout.options.enumerated() {
            options.append((Rect(x: left + option.start, y: row + 1 + option.line, width: option.length, height: 1), key, index))
        }
        if let error = state.errors[key] {
            screen.write("⚠ " + error, column: left, row: row + 1 + layout.lines.count, style: [.bold, .destructive], limit: width)
        }
    }

    /// The option under a cell (a radio, a checkbox, a yes/no box): its field and its index.
    public func option(column: Int, row: Int) -> (field: String, index: Int)? {
        options.last { $0.rect.contains(column: column, row: row) }.map { ($0.field, $0.index) }
    }
}

import FormModel

/// Draws a sheet's chrome and fields into its frame, and says which cell is which control
/// (so a click can focus a field or press a button).
public struct SheetView: Sendable {
    public let state: SheetState
    public let frame: PresentationFrame
    /// Clickable rectangles, later ones on top.
    public private(set) var regions: [(rect: Rect, target: SheetFocus)] = []
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
            let sideBySide = choices.map { $0.label.count + 6 }.reduce(0, +) <= PresentationFrame.popoverColumns - 4
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
        let done = " \(form.completionLabel) "
        button(cancel, .cancel, column: left - 1, row: row, on: &screen)
        button(done, .complete, column: rect.maxX - 1 - done.count, row: row, on: &screen, style: .bold)
        let room = max(0, inner - cancel.count - done.count - 2)
        let title = String(form.title.prefix(room))
        screen.write(title, column: left + cancel.count + (room - title.count) / 2, row: row, style: .bold)
        row += 1
        for column in rect.x + 1..<rect.maxX - 1 { screen[column, row] = Cell("─") }
        row += 1
        if form.pages.count > 1 {
            let step = "Step \(state.page + 1) of \(form.pages.count)" + (form.pages[state.page].title.map { " · \($0)" } ?? "")
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
        let hintRow = rect.maxY - 2
        drawFields(from: row + 1, to: hintRow - 1, left: left, width: inner, on: &screen)
        let notice = state.notice.map { "\($0) · " } ?? ""
        let full = state.keyHints ?? "Tab next · Enter advance · Esc save & close · F1 keys"
        let hints = notice.count + full.count <= inner ? full : notice.count + 26 <= inner ? "Esc save & close · F1 keys" : "F1 keys"
        screen.write(notice + hints, column: left, row: hintRow, style: .reverse, limit: inner)
        if let confirmation = state.confirmation {
            drawConfirmation(confirmation, on: &screen)
        }
    }

    mutating func button(_ label: String, _ target: SheetFocus, column: Int, row: Int, on screen: inout Screen, style: CellStyle = []) {
        let focused = state.focus == target && state.confirmation == nil
        screen.write(label, column: column, row: row, style: focused ? style.union(.reverse) : style)
        regions.append((Rect(x: column, y: row, width: label.count, height: 1), target))
    }

    /// Lays the fields out in blocks and scrolls so the focused one is visible; says when fields lie
    /// above ("↑ more") or below ("↓ more") what the sheet shows.
    mutating func drawFields(from top: Int, to bottom: Int, left: Int, width: Int, on screen: inout Screen) {
        let fields = state.visibleFields
        let heights = fields.map { field in
            (field.kind == .note ? 1 : 1 + valueLayout(field, width: width).lines.count) + (state.errors[field.id] == nil ? 0 : 1) + 1
        }
        let available = max(0, bottom - top + 1)
        var offset = 0
        if case .field(let id) = state.focus, let index = fields.firstIndex(where: { $0.id == id }) {
            let end = heights[...index].reduce(0, +)
            if end > available { offset = end - available }
        }
        var y = top - offset
        var hiddenBelow = false
        for (field, height) in zip(fields, heights) {
            defer { y += height }
            guard y >= top, y + height - 1 <= bottom + 1 else {
                if y >= top { hiddenBelow = true }
                continue
            }
            drawField(field, row: y, left: left, width: width, on: &screen)
        }
        if offset > 0 { screen.write(" ↑ more ", column: left + width - 8, row: top - 1, style: .bold) }
        // On the sheet's bottom edge, below the key hints.
        if hiddenBelow { screen.write(" ↓ more ", column: left + width - 8, row: bottom + 2, style: .bold) }
    }

    /// Rows a multiline text field shows: at least three, growing with its text up to six.
    static let multilineRows = 3...6

    /// The value slot's lines, and where each option sits in them (line, first column, length) so a
    /// click can choose it: one line for most fields; choices side by side when they fit, else one per
    /// line; a text field as wide as the sheet; a multiline field on several lines.
    func valueLayout(_ field: FieldDefinition, width: Int) -> (lines: [String], options: [(line: Int, start: Int, length: Int)]) {
        let focused = state.focus == .field(field.id) && state.confirmation == nil
        let items: [String]
        switch field.kind {
        case .boolean:
            let line: String
            if case .boolean(let on)? = state.answers[field.id] { line = on ? "[✓] Yes" : "[ ] No" } else { line = "[ ] —" }
            return ([line], [(0, 0, line.count)])
        case .singleChoice:
            let chosen: String? = { if case .choice(let value)? = state.answers[field.id] { return value } else { return nil } }()
            items = (field.choices ?? []).map { (($0.value == chosen) ? "(•) " : "( ) ") + $0.label }
        case .multipleChoice:
            let chosen: [String] = { if case .choices(let values)? = state.answers[field.id] { return values } else { return [] } }()
            let cursor = state.choiceCursor[field.id] ?? 0
            items = (field.choices ?? []).enumerated().map { index, choice in
                (focused && index == cursor ? "›" : "") + (chosen.contains(choice.value) ? "[x] " : "[ ] ") + choice.label
            }
        case .multilineText:
            let room = max(3, width - 2)
            var wrapped: [String] = []
            for paragraph in state.text(of: field).split(separator: "\n", omittingEmptySubsequences: false) {
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
            let text = state.text(of: field).replacingOccurrences(of: "\n", with: "⏎")
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

    mutating func drawField(_ field: FieldDefinition, row: Int, left: Int, width: Int, on screen: inout Screen) {
        if field.kind == .note {
            screen.write("ℹ " + field.label, column: left, row: row, limit: width)
            return
        }
        var label = field.label + (field.required ? " *" : "")
        if let hint = field.hint { label += " — \(hint)" }
        screen.write(label, column: left, row: row, limit: width)
        let focused = state.focus == .field(field.id) && state.confirmation == nil
        let layout = valueLayout(field, width: width)
        for (offset, line) in layout.lines.enumerated() {
            screen.write(line, column: left, row: row + 1 + offset, style: focused ? .reverse : .underline, limit: width)
        }
        regions.append((Rect(x: left, y: row, width: width, height: 1 + layout.lines.count), .field(field.id)))
        for (index, option) in layout.options.enumerated() {
            options.append((Rect(x: left + option.start, y: row + 1 + option.line, width: option.length, height: 1), field.id, index))
        }
        if let error = state.errors[field.id] {
            screen.write("⚠ " + error, column: left, row: row + 1 + layout.lines.count, style: [.bold, .destructive], limit: width)
        }
    }

    /// The option under a cell (a radio, a checkbox, a yes/no box): its field and its index.
    public func option(column: Int, row: Int) -> (field: String, index: Int)? {
        options.last { $0.rect.contains(column: column, row: row) }.map { ($0.field, $0.index) }
    }

    /// The confirmation: an action sheet at the bottom of the sheet, or an alert (centred) over a popover.
    mutating func drawConfirmation(_ confirmation: DiscardConfirmation, on screen: inout Screen) {
        let box = confirmationBox(confirmation)
        let width = box.width
        screen.clear(box)
        screen.box(box)
        screen.write(confirmation.title, column: box.x + 2, row: box.y + 1, style: .bold, limit: width - 4)
        let message = TextWrap.lines(confirmation.message, width: width - 4)
        for (offset, line) in message.enumerated() {
            screen.write(line, column: box.x + 2, row: box.y + 2 + offset)
        }
        for (index, choice) in confirmation.choices.enumerated() {
            var style: CellStyle = choice.isDestructive ? [.destructive, .bold] : []
            if index == state.confirmationSelection { style.insert(.reverse) }
            let label = " \(choice.label) "
            let row = box.y + 3 + message.count + index
            screen.write(label, column: box.x + (width - label.count) / 2, row: row, style: style)
        }
    }

    /// The choice under a cell of the confirmation, if it is up.
    public func confirmationChoice(column: Int, row: Int) -> ConfirmationChoice? {
        guard let confirmation = state.confirmation else { return nil }
        let box = confirmationBox(confirmation)
        let messageLines = TextWrap.lines(confirmation.message, width: box.width - 4).count
        let index = row - (box.y + 3 + messageLines)
        guard confirmation.choices.indices.contains(index), column > box.x, column < box.maxX - 1 else { return nil }
        return confirmation.choices[index]
    }

    /// Where the confirmation sits: an action sheet at the bottom of the sheet, an alert centred over a popover.
    func confirmationBox(_ confirmation: DiscardConfirmation) -> Rect {
        let rect = frame.rect
        let width = min(rect.width - 2, max(44, confirmation.title.count + 4))
        let height = confirmation.choices.count + 4 + TextWrap.lines(confirmation.message, width: width - 4).count
        let isAlert = frame.arrow != nil
        // An action sheet rises from the bottom of the sheet, above its key hints; an alert is centred.
        let y = isAlert ? rect.y + max(1, (rect.height - height) / 2) : rect.maxY - height - 2
        return Rect(x: rect.x + (rect.width - width) / 2, y: max(rect.y, y), width: width, height: height)
    }
}

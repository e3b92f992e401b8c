import FormModel

/// Draws a sheet's chrome and fields into its frame, and says which cell is which control
/// (so a click can focus a field or press a button).
public struct SheetView: Sendable {
    public let state: SheetState
    public let frame: PresentationFrame
    /// Clickable rectangles, later ones on top.
    public private(set) var regions: [(rect: Rect, target: SheetFocus)] = []

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
        let full = "Tab next · Enter advance · Esc save & close · Ctrl-C quit"
        let hints = notice.count + full.count <= inner ? full : "Esc save & close · ^C quit"
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

    /// Lays the fields out in blocks and scrolls so the focused one is visible.
    mutating func drawFields(from top: Int, to bottom: Int, left: Int, width: Int, on screen: inout Screen) {
        let fields = state.visibleFields
        let heights = fields.map { field in
            (field.kind == .note ? 1 : 1 + valueLines(field, width: width).count) + (state.errors[field.id] == nil ? 0 : 1) + 1
        }
        let available = max(0, bottom - top + 1)
        var offset = 0
        if case .field(let id) = state.focus, let index = fields.firstIndex(where: { $0.id == id }) {
            let end = heights[...index].reduce(0, +)
            if end > available { offset = end - available }
        }
        var y = top - offset
        for (field, height) in zip(fields, heights) {
            defer { y += height }
            guard y >= top, y + height - 1 <= bottom + 1 else { continue }
            drawField(field, row: y, left: left, width: width, on: &screen)
        }
        if offset > 0 { screen.write("↑ more", column: left + width - 6, row: top, style: .bold) }
    }

    /// The value slot's lines: one for most fields; choices side by side when they fit, else one per line.
    func valueLines(_ field: FieldDefinition, width: Int) -> [String] {
        let focused = state.focus == .field(field.id) && state.confirmation == nil
        let items: [String]
        switch field.kind {
        case .boolean:
            if case .boolean(let on)? = state.answers[field.id] { return [on ? "[✓] Yes" : "[ ] No"] }
            return ["[ ] —"]
        case .singleChoice:
            let chosen: String? = { if case .choice(let value)? = state.answers[field.id] { return value } else { return nil } }()
            items = (field.choices ?? []).map { (($0.value == chosen) ? "(•) " : "( ) ") + $0.label }
        case .multipleChoice:
            let chosen: [String] = { if case .choices(let values)? = state.answers[field.id] { return values } else { return [] } }()
            let cursor = state.choiceCursor[field.id] ?? 0
            items = (field.choices ?? []).enumerated().map { index, choice in
                (focused && index == cursor ? "›" : "") + (chosen.contains(choice.value) ? "[x] " : "[ ] ") + choice.label
            }
        default:
            let text = state.text(of: field).replacingOccurrences(of: "\n", with: "⏎")
            let room = max(3, min(width, 40)) - 2
            let shown = text.count >= room ? "…" + String(text.suffix(room - 2)) : text
            return ["[" + shown.padding(toLength: room - 1, withPad: " ", startingAt: 0) + (focused ? "▏" : " ") + "]"]
        }
        let joined = items.joined(separator: "  ")
        return joined.count <= width ? [joined] : items.enumerated().map { "\($0.offset + 1) \($0.element)" }
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
        let lines = valueLines(field, width: width)
        for (offset, line) in lines.enumerated() {
            screen.write(line, column: left, row: row + 1 + offset, style: focused ? .reverse : .underline, limit: width)
        }
        regions.append((Rect(x: left, y: row, width: width, height: 1 + lines.count), .field(field.id)))
        if let error = state.errors[field.id] {
            screen.write("⚠ " + error, column: left, row: row + 1 + lines.count, style: [.bold, .destructive], limit: width)
        }
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

import FormModel

/// Draws how a form is presented on an empty home screen of a given size: the split view behind,
/// dimmed where the style dims it, and the sheet with its chrome (Cancel, title, completion button,
/// "Step 1 of N") and the first page's fields.
public struct PresentationPreview: Sendable {
    public let form: FormDefinition
    public let size: TerminalSize

    public init(form: FormDefinition, size: TerminalSize) {
        self.form = form
        self.size = size
    }

    public var presentation: ResolvedPresentation {
        ResolvedPresentation(form: form, sizeClass: SizeClass.forTerminal(columns: size.columns))
    }

    /// Where the sheet sits.
    public var frame: PresentationFrame {
        let home = HomeLayout(size: size)
        return PresentationFrame(
            presentation, home: home, contentRows: Self.contentRows(of: form.pages.first),
            anchor: home.control(named: form.anchor), pane: home.pane(named: form.pane))
    }

    /// The screen as drawn.
    public func render() -> Screen {
        let home = HomeLayout(size: size)
        var screen = Screen(size: size)
        Self.drawHome(home, on: &screen)
        let frame = self.frame
        for rect in frame.dimmed { screen.apply(.dim, to: rect) }
        drawSheet(in: frame, on: &screen)
        return screen
    }

    static func contentRows(of page: FormPage?) -> Int {
        (page?.fields.count ?? 0) * 2
    }

    static func drawHome(_ home: HomeLayout, on screen: inout Screen) {
        screen.box(home.listPane)
        screen.write(" Jobs ", column: home.listPane.x + 2, row: home.listPane.y, style: .bold)
        screen.write("[+ New]", column: home.newControl.x, row: home.newControl.y)
        screen.write("[Filter]", column: home.filterControl.x, row: home.filterControl.y)
        screen.write("No records yet.", column: home.listPane.x + 2, row: home.listPane.y + 3)
        if let detail = home.detailPane {
            screen.box(detail)
            screen.write(" Details ", column: detail.x + 2, row: detail.y, style: .bold)
            screen.write("Select a record to see it here.", column: detail.x + 2, row: detail.y + 3)
        }
        screen.write(" Offline · nothing queued", column: 0, row: home.statusLine.y)
        screen.write(" n New  f Filter  ↑↓ Move  Enter Open  q Quit", column: 0, row: home.keyHints.y, style: .reverse)
    }

    func drawSheet(in frame: PresentationFrame, on screen: inout Screen) {
        let rect = frame.rect
        screen.clear(rect)
        screen.box(rect)
        if let arrow = frame.arrow {
            screen[arrow.column, arrow.row] = Cell(arrow.pointsUp ? "▲" : "▼")
        }
        let inner = rect.width - 4
        let row = rect.y + 1
        let cancel = form.cancelLabel
        let done = form.completionLabel
        screen.write(cancel, column: rect.x + 2, row: row)
        screen.write(done, column: rect.maxX - 2 - done.count, row: row, style: .bold)
        let titleRoom = max(0, inner - cancel.count - done.count - 2)
        let title = String(form.title.prefix(titleRoom))
        screen.write(title, column: rect.x + 2 + cancel.count + 1 + (titleRoom - title.count) / 2, row: row, style: .bold)
        for column in rect.x + 1..<rect.maxX - 1 { screen[column, row + 1] = Cell("─") }
        var y = row + 2
        if form.pages.count > 1 {
            let step = "Step 1 of \(form.pages.count)" + (form.pages[0].title.map { " · \($0)" } ?? "")
            screen.write(step, column: rect.x + 2, row: y, limit: inner)
            screen.write("Next ›", column: rect.maxX - 8, row: y)
            y += 1
        }
        let relevant = Relevance(form: form).relevantFields(for: FormValidator(form: form).defaults)
        for field in form.pages.first?.fields ?? [] where relevant.contains(field.id) {
            guard y + 1 < rect.maxY - 1 else { break }
            let marker = field.required ? " *" : ""
            screen.write(field.label + marker, column: rect.x + 2, row: y, limit: inner)
            let value = field.defaultValue?.display(for: field) ?? ""
            let shown = field.kind == .note ? "" : "[\(value.padding(toLength: max(0, min(inner - 2, 30)), withPad: " ", startingAt: 0))]"
            screen.write(shown, column: rect.x + 2, row: y + 1, style: .underline, limit: inner)
            y += 2
        }
    }
}

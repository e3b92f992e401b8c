/// Every key of the place it was asked from (`?` on the home screen, `F1` or `?` in a sheet), in a
/// box over everything; any key closes it.
public enum HelpView {
    public enum Context: Sendable, Hashable {
        case home
        case sheet
    }

    static let homeKeys: [(String, String)] = [
        ("n", "New record: choose a form (or click [+ New])"),
        ("Enter", "Open the selected record"),
        ("↑ ↓  j k", "Move the selection"),
        ("/", "Search titles and values; Esc clears"),
        ("f", "Filter by state (or click [Filter])"),
        ("s", "Sync now (the app also syncs by itself)"),
        ("c", "Conflicts: resolve the selected record's"),
        ("d", "Delete the selected draft (asks first)"),
        ("?", "These keys"),
        ("q  Ctrl-C", "Quit"),
    ]

    static let sheetKeys: [(String, String)] = [
        ("Tab ↓  ⇧Tab ↑", "Next / previous field or button"),
        ("Enter", "Next field; a new line in a long text"),
        ("Space 1-9 ← →", "Choose an option (or click it)"),
        ("Ctrl-U", "Clear the field"),
        ("F2", "Next language of a form written in several"),
        ("Photo, file", "Type the file's path, Tab completes, Enter attaches"),
        ("Next ›", "Check this step, then move on"),
        ("Esc", "Close, keeping everything typed"),
        ("Cancel", "Discard this sheet's typing (asks)"),
        ("Ctrl-C", "Keep everything and quit"),
        ("F1  ?", "These keys (? types in text fields)"),
    ]

    /// The lines of the box for `context`.
    public static func lines(_ context: Context) -> [(key: String, meaning: String)] {
        (context == .home ? homeKeys : sheetKeys).map { (key: $0.0, meaning: $0.1) }
    }

    /// Draws the box centred on `screen`.
    public static func draw(_ context: Context, on screen: inout Screen) {
        let size = screen.size
        let entries = lines(context)
        let keyWidth = entries.map(\.key.count).max() ?? 0
        let width = min(size.columns - 2, max(40, keyWidth + 3 + (entries.map(\.meaning.count).max() ?? 0) + 4))
        let height = min(size.rows, entries.count + 5)
        let box = Rect(x: (size.columns - width) / 2, y: max(0, (size.rows - height) / 2), width: width, height: height)
        screen.clear(box)
        screen.box(box)
        screen.write(" Keys ", column: box.x + 2, row: box.y, style: .bold)
        screen.write(context == .home ? "Every key on this screen" : "Every key in a sheet", column: box.x + 2, row: box.y + 1, style: .bold, limit: width - 4)
        for (offset, entry) in entries.prefix(max(0, height - 5)).enumerated() {
            let row = box.y + 2 + offset
            screen.write(entry.key, column: box.x + 2, row: row, style: .bold, limit: width - 4)
            screen.write(entry.meaning, column: box.x + 3 + keyWidth, row: row, limit: max(0, width - keyWidth - 5))
        }
        screen.write("Any key closes this.", column: box.x + 2, row: box.maxY - 2, style: .reverse, limit: width - 4)
    }
}

/// Draws the home screen: the list pane with New and Filter, the detail pane, the status line and the key hints.
public enum HomeView {
    /// The key hints at the bottom of the home screen; Quit is always among them.
    public static let keyHints = " n New  f Filter  ↑↓ Move  Enter Open  d Delete draft  s Sync  c Conflicts  q Quit"

    public static func draw(_ state: HomeState, layout: HomeLayout, on screen: inout Screen) {
        let list = layout.listPane
        screen.box(list)
        screen.write(" Records ", column: list.x + 2, row: list.y, style: .bold)
        screen.write("[+ New]", column: layout.newControl.x, row: layout.newControl.y)
        screen.write("[Filter]", column: layout.filterControl.x, row: layout.filterControl.y)
        let visible = state.visibleRecords
        if visible.isEmpty {
            screen.write(state.records.isEmpty ? "No records yet. Press n to start one." : "No records match the filter.", column: list.x + 2, row: list.y + 3, limit: list.width - 4)
        }
        let rows = max(0, list.height - 4)
        let first = max(0, min(state.selection - rows + 1, visible.count - rows))
        for (offset, record) in visible.dropFirst(first).prefix(rows).enumerated() {
            let index = first + offset
            let line = "\(record.state.marker) \(record.headline.isEmpty ? record.formTitle : record.headline) · \(record.state.rawValue)"
            let text = line.padding(toLength: max(0, list.width - 4), withPad: " ", startingAt: 0)
            screen.write(text, column: list.x + 2, row: list.y + 3 + offset, style: index == state.selection ? .reverse : [], limit: list.width - 4)
        }
        if let detail = layout.detailPane {
            screen.box(detail)
            screen.write(" Details ", column: detail.x + 2, row: detail.y, style: .bold)
            if let record = state.selected {
                screen.write(record.formTitle, column: detail.x + 2, row: detail.y + 2, style: .bold, limit: detail.width - 4)
                screen.write(record.state.rawValue, column: detail.x + 2, row: detail.y + 3, limit: detail.width - 4)
                for (offset, item) in record.details.prefix(max(0, detail.height - 7)).enumerated() {
                    screen.write("\(item.label): \(item.value)", column: detail.x + 2, row: detail.y + 5 + offset, limit: detail.width - 4)
                }
            } else {
                screen.write("Select a record to see it here.", column: detail.x + 2, row: detail.y + 3, limit: detail.width - 4)
            }
        }
        screen.write(" " + state.status, column: 0, row: layout.statusLine.y, limit: layout.size.columns)
        screen.write(keyHints.padding(toLength: layout.size.columns, withPad: " ", startingAt: 0), column: 0, row: layout.keyHints.y, style: .reverse)
    }
}

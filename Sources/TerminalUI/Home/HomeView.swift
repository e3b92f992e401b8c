/// Draws the home screen: the list pane with New and Filter, the detail pane, the status line and the key hints.
public enum HomeView {
    /// The list rows shown for `state` in `layout`: the first visible index and how many rows fit.
    public static func window(_ state: HomeState, layout: HomeLayout) -> Range<Int> {
        let rows = max(0, layout.listPane.height - 4)
        let count = state.visibleRecords.count
        let first = max(0, min(state.selection - rows + 1, count - rows))
        return first..<min(count, first + rows)
    }

    /// What the list header says about the filter and the search, when either narrows the list, in at
    /// most `width` columns (the states by name when they fit, else how many of them).
    public static func narrowing(_ state: HomeState, width: Int) -> String? {
        var search: String?
        if let text = state.search, !text.isEmpty || state.isEditingSearch {
            search = "/" + text + (state.isEditingSearch ? "▏" : "")
        }
        var filter: String?
        if state.isFiltered {
            let shown = RecordListItem.State.allCases.filter { state.shownStates.contains($0) }
            let named = "filtered: " + shown.map(\.rawValue).joined(separator: ", ")
            let used = (search.map { $0.count + 3 } ?? 0)
            filter = named.count + used <= width ? named : "filtered \(shown.count) of \(RecordListItem.State.allCases.count)"
        }
        let parts = [filter, search].compactMap { $0 }
        guard !parts.isEmpty else { return nil }
        let text = parts.joined(separator: " · ")
        // The end of a long search is what was typed last: keep it in view.
        return text.count <= width ? text : "…" + String(text.suffix(max(0, width - 1)))
    }

    /// The detail pane's lines: each "label: value" wrapped whole to `width` (its later lines indented), in at
    /// most `room` lines, the last ending in "…" when more would follow.
    public static func detailLines(_ details: [(label: String, value: String)], width: Int, room: Int) -> [String] {
        guard width > 2, room > 0 else { return [] }
        var lines: [String] = []
        for item in details {
            let wrapped = TextWrap.lines("\(item.label): \(item.value)", width: width)
            guard let first = wrapped.first else { continue }
            lines.append(first)
            let rest = wrapped.dropFirst().joined(separator: " ")
            lines += TextWrap.lines(rest, width: width - 2).map { "  " + $0 }
            if lines.count > room { break }
        }
        guard lines.count > room else { return lines }
        var kept = Array(lines.prefix(room))
        kept[room - 1] = String(kept[room - 1].prefix(width - 1)) + "…"
        return kept
    }

    public static func draw(_ state: HomeState, layout: HomeLayout, on screen: inout Screen) {
        let list = layout.listPane
        screen.box(list)
        screen.write(" Records ", column: list.x + 2, row: list.y, style: .bold)
        screen.write("[+ New]", column: layout.newControl.x, row: layout.newControl.y)
        screen.write("[Filter]", column: layout.filterControl.x, row: layout.filterControl.y, style: state.isFiltered ? .bold : [])
        let room = max(0, layout.newControl.x - list.x - 3)
        if let narrowing = narrowing(state, width: room) {
            screen.write(narrowing, column: list.x + 2, row: list.y + 1, style: .bold, limit: room)
        }
        let visible = state.visibleRecords
        if visible.isEmpty {
            let message = state.records.isEmpty ? "No records yet. Press n to start one."
                : "No records match the \(state.isFiltered ? "filter" : "search")\(state.isFiltered && state.search?.isEmpty == false ? " and search" : ""). " + (state.isFiltered ? "Press f to change it." : "Esc clears the search.")
            for (offset, line) in TextWrap.lines(message, width: list.width - 4).enumerated() {
                screen.write(line, column: list.x + 2, row: list.y + 3 + offset, limit: list.width - 4)
            }
        }
        let window = window(state, layout: layout)
        for index in window {
            let record = visible[index]
            let line = "\(record.state.marker) \(record.headline.isEmpty ? record.formTitle : record.headline) · \(record.state.rawValue)"
            let text = line.padding(toLength: max(0, list.width - 4), withPad: " ", startingAt: 0)
            screen.write(text, column: list.x + 2, row: list.y + 3 + index - window.lowerBound, style: index == state.selection ? .reverse : [], limit: list.width - 4)
        }
        if window.lowerBound > 0 { screen.write(" ↑ more ", column: list.maxX - 10, row: list.y + 2, style: .bold) }
        if window.upperBound < visible.count { screen.write(" ↓ \(visible.count - window.upperBound) more ", column: list.x + 2, row: list.maxY - 1, style: .bold) }
        if let detail = layout.detailPane {
            screen.box(detail)
            screen.write(" Details ", column: detail.x + 2, row: detail.y, style: .bold)
            if let record = state.selected {
                screen.write(record.formTitle, column: detail.x + 2, row: detail.y + 2, style: .bold, limit: detail.width - 4)
                screen.write(record.state.rawValue, column: detail.x + 2, row: detail.y + 3, limit: detail.width - 4)
                for (offset, line) in detailLines(state.selectedDetails, width: detail.width - 4, room: max(0, detail.height - 7)).enumerated() {
                    screen.write(line, column: detail.x + 2, row: detail.y + 5 + offset, limit: detail.width - 4)
                }
            } else {
                screen.write("Select a record to see it here.", column: detail.x + 2, row: detail.y + 3, limit: detail.width - 4)
            }
        }
        let status = " " + state.statusLine
        let columns = layout.size.columns
        screen.write(status.count <= columns ? status : String(status.prefix(max(0, columns - 1))) + "…", column: 0, row: layout.statusLine.y, limit: columns)
        let hints = state.isEditingSearch
            ? KeyHints.line(["type to search", "Enter keep", "Esc clear"], always: [], width: layout.size.columns)
            : KeyHints.line(width: layout.size.columns)
        screen.write(hints.padding(toLength: layout.size.columns, withPad: " ", startingAt: 0), column: 0, row: layout.keyHints.y, style: .reverse)
    }
}

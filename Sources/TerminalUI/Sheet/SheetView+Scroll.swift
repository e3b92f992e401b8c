extension SheetView {
    /// Where to draw the field area from: where the sheet was scrolled (`previous`), moved only as far as it
    /// takes to show the focused row, so moving back up does not jump, and up when rows below it no longer fill
    /// `available` lines. An instance's title (where its Remove button is) brings the instance's fields into
    /// view under it, as far as they fit. `height` gives a row's lines by index; it is asked only about the
    /// rows from the position to the bottom of the frame, and those between it and the focused row when the
    /// focus lies further (at most `available` lines of them).
    static func scrollPosition(rows: [SheetRow], focus: SheetFocus, from previous: SheetScroll, available: Int, height: (Int) -> Int) -> SheetScroll {
        guard !rows.isEmpty else { return SheetScroll() }
        /// `lines` lines above `position`, stopping at the first row.
        func up(_ position: SheetScroll, by lines: Int) -> SheetScroll {
            var position = position
            var lines = lines
            while lines > 0 {
                if position.line >= lines {
                    position.line -= lines
                    break
                }
                lines -= position.line
                guard position.row > 0 else { return SheetScroll() }
                position.row -= 1
                position.line = height(position.row)
            }
            return position
        }
        /// The lines from `position` to the start of row `end`, counted only up to `limit + 1`.
        func lines(from position: SheetScroll, to end: Int, limit: Int) -> Int {
            var total = -position.line
            var index = position.row
            while index < end, total <= limit {
                total += height(index)
                index += 1
            }
            return total
        }
        // Where it was, on rows that may have changed since: inside the rows, the line inside its row.
        var position = SheetScroll(row: min(max(0, previous.row), rows.count - 1), line: max(0, previous.line))
        while position.line > 0, position.line >= height(position.row) {
            guard position.row < rows.count - 1 else {
                position.line = height(position.row) - 1
                break
            }
            position.line -= height(position.row)
            position.row += 1
        }
        // No blank lines under the last row while there are rows above.
        let filled = lines(from: position, to: rows.count, limit: available)
        if filled < available { position = up(position, by: available - filled) }
        // Only fields and repeat buttons are rows; Back, Next and the sheet's buttons are not.
        switch focus {
        case .field, .addInstance, .removeInstance: break
        case .back, .next, .cancel, .complete: return position
        }
        guard let index = rows.nearestIndex(from: position.row, where: { $0.focus == focus }) else { return position }
        // The focused row and, for an instance's title, the rows of the instance under it.
        var end = index + 1
        if case .instance(_, _, let depth) = rows[index] {
            while end < rows.count, rows[end].depth > depth || (rows[end].depth == depth && rows[end].isInstanceContent) {
                end += 1
            }
        }
        // Above the top (or partly scrolled past): it goes to the top.
        if index < position.row || (index == position.row && position.line > 0) { return SheetScroll(row: index) }
        // Below the bottom: the sheet scrolls until its end is at the bottom, or its start at the top.
        guard lines(from: position, to: end, limit: available) > available else { return position }
        if lines(from: SheetScroll(row: index), to: end, limit: available) >= available { return SheetScroll(row: index) }
        return up(SheetScroll(row: end), by: available)
    }
}

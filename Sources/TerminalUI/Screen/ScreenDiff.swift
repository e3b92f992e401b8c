/// The bytes that turn what the terminal shows into a new screen, writing only the cells that changed.
public struct ScreenDiff: Sendable {
    /// The escape sequences and text to write.
    public var output: String
    /// How many cells were written (the whole screen on a first draw or a resize).
    public var cellsWritten: Int

    /// Compares `previous` (what the terminal shows, nil if unknown) with `next`.
    public init(from previous: Screen?, to next: Screen, colour: Bool = true) {
        var output = ""
        var written = 0
        let full = previous == nil || previous?.size != next.size
        if full { output += "\u{1B}[0m\u{1B}[2J" }
        var style: CellStyle? = nil
        for row in 0..<next.size.rows {
            var column = 0
            while column < next.size.columns {
                let cell = next[column, row]
                if !full, let previous, previous[column, row] == cell {
                    column += 1
                    continue
                }
                // A run of changed cells starts here: move once, then write until the run ends.
                output += "\u{1B}[\(row + 1);\(column + 1)H"
                while column < next.size.columns {
                    let current = next[column, row]
                    if !full, let previous, previous[column, row] == current { break }
                    let wanted = colour ? current.style : current.style.subtracting(.destructive)
                    if wanted != style {
                        output += ANSI.sgr(wanted)
                        style = wanted
                    }
                    output.append(current.character)
                    written += 1
                    column += 1
                }
            }
        }
        if style != nil && style != [] { output += ANSI.sgr([]) }
        self.output = output
        self.cellsWritten = written
    }
}

import FormModel

/// How one cell is drawn.
public struct CellStyle: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let bold = CellStyle(rawValue: 1 << 0)
    public static let dim = CellStyle(rawValue: 1 << 1)
    public static let reverse = CellStyle(rawValue: 1 << 2)
    public static let underline = CellStyle(rawValue: 1 << 3)
    public static let destructive = CellStyle(rawValue: 1 << 4)
}

/// One character cell.
public struct Cell: Sendable, Hashable {
    public var character: Character
    public var style: CellStyle

    public init(_ character: Character = " ", style: CellStyle = []) {
        self.character = character
        self.style = style
    }
}

extension Cell {
    /// The cell as it may reach the terminal. Every cell is stored through `Screen`'s subscript, which keeps
    /// only drawable cells, so no view can put a control character (ESC, another C0 or C1 control, a
    /// bidirectional override) on screen: it shows as its visible stand-in (`␛` for ESC), one cell wide.
    var drawable: Cell {
        if let ascii = character.asciiValue, ascii >= 0x20, ascii != 0x7F { return self }
        guard let control = character.unicodeScalars.first(where: TerminalText.isControl) else { return self }
        return Cell(Character(TerminalText.picture(of: control)), style: style)
    }
}

/// A grid of styled cells: what the terminal shows, built by pure drawing functions.
/// Text written into it with control characters shows them as visible symbols (see `Cell.drawable`).
public struct Screen: Sendable, Hashable {
    public let size: TerminalSize
    private(set) var cells: [Cell]

    public init(size: TerminalSize) {
        self.size = size
        self.cells = Array(repeating: Cell(), count: max(0, size.columns * size.rows))
    }

    public subscript(column: Int, row: Int) -> Cell {
        get { cells[row * size.columns + column] }
        set {
            guard column >= 0, column < size.columns, row >= 0, row < size.rows else { return }
            cells[row * size.columns + column] = newValue.drawable
        }
    }

    /// Writes `text` from (`column`, `row`), clipped to the screen and to `limit` cells.
    public mutating func write(_ text: String, column: Int, row: Int, style: CellStyle = [], limit: Int? = nil) {
        var x = column
        let end = limit.map { column + $0 } ?? size.columns
        for character in text {
            guard x < end else { break }
            self[x, row] = Cell(character, style: style)
            x += 1
        }
    }

    /// Fills `rect` with blank cells of `style`.
    public mutating func clear(_ rect: Rect, style: CellStyle = []) {
        for row in rect.y..<rect.maxY {
            for column in rect.x..<rect.maxX {
                self[column, row] = Cell(" ", style: style)
            }
        }
    }

    /// Adds `style` to every cell of `rect`, keeping its character (used to dim what lies behind a sheet).
    public mutating func apply(_ style: CellStyle, to rect: Rect) {
        for row in max(0, rect.y)..<min(size.rows, rect.maxY) {
            for column in max(0, rect.x)..<min(size.columns, rect.maxX) {
                cells[row * size.columns + column].style.formUnion(style)
            }
        }
    }

    /// Draws a single-line box border around `rect`.
    public mutating func box(_ rect: Rect, style: CellStyle = []) {
        guard rect.width >= 2, rect.height >= 2 else { return }
        for column in rect.x + 1..<rect.maxX - 1 {
            self[column, rect.y] = Cell("─", style: style)
            self[column, rect.maxY - 1] = Cell("─", style: style)
        }
        for row in rect.y + 1..<rect.maxY - 1 {
            self[rect.x, row] = Cell("│", style: style)
            self[rect.maxX - 1, row] = Cell("│", style: style)
        }
        self[rect.x, rect.y] = Cell("┌", style: style)
        self[rect.maxX - 1, rect.y] = Cell("┐", style: style)
        self[rect.x, rect.maxY - 1] = Cell("└", style: style)
        self[rect.maxX - 1, rect.maxY - 1] = Cell("┘", style: style)
    }

    /// The screen as plain text, one line per row; dimmed blank cells show as `·` so the backdrop is visible without colour.
    public func plainText(markDim: Bool = true) -> String {
        var lines: [String] = []
        for row in 0..<size.rows {
            var line = ""
            for column in 0..<size.columns {
                let cell = cells[row * size.columns + column]
                line.append(markDim && cell.style.contains(.dim) && cell.character == " " ? "·" : cell.character)
            }
            while line.last == " " { line.removeLast() }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// The screen as ANSI text with SGR attributes (for a colour terminal).
    public func ansiText() -> String {
        var output = ""
        for row in 0..<size.rows {
            var current: CellStyle = []
            for column in 0..<size.columns {
                let cell = cells[row * size.columns + column]
                if cell.style != current {
                    output += ANSI.sgr(cell.style)
                    current = cell.style
                }
                output.append(cell.character)
            }
            output += ANSI.sgr([]) + "\n"
        }
        return output
    }
}

/// ANSI escape sequences.
public enum ANSI {
    /// The Select Graphic Rendition sequence for `style` (always resetting first).
    public static func sgr(_ style: CellStyle) -> String {
        var codes = ["0"]
        if style.contains(.bold) { codes.append("1") }
        if style.contains(.dim) { codes.append("2") }
        if style.contains(.underline) { codes.append("4") }
        if style.contains(.reverse) { codes.append("7") }
        if style.contains(.destructive) { codes.append("31") }
        return "\u{1B}[" + codes.joined(separator: ";") + "m"
    }
}

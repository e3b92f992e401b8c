/// A workbook as the importer sees it: its sheets in order, each a sparse grid of values.
public struct Workbook: Sendable, Hashable {
    /// The sheets read.
    public var sheets: [Sheet]
    /// The names of every sheet of the workbook, read or not, in order.
    public var sheetNames: [String]

    public init(sheets: [Sheet], sheetNames: [String]? = nil) {
        self.sheets = sheets
        self.sheetNames = sheetNames ?? sheets.map(\.name)
    }

    /// The sheet called `name`, compared without regard to case (`Survey` is `survey`).
    public func sheet(named name: String) -> Sheet? {
        sheets.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }
}

/// One sheet: its rows that hold any value, in order.
public struct Sheet: Sendable, Hashable {
    public var name: String
    public var rows: [Row]

    public init(name: String, rows: [Row]) {
        self.name = name
        self.rows = rows
    }

    /// A row: its 1-based number and its cells by 0-based column.
    public struct Row: Sendable, Hashable {
        public var number: Int
        public var cells: [Int: CellValue]

        public init(number: Int, cells: [Int: CellValue]) {
            self.number = number
            self.cells = cells
        }
    }

    /// Where a cell is, as people write it: `survey!B14`.
    public func reference(row: Int, column: Int) -> String {
        "\(name)!\(CellReference(row: row, column: column))"
    }
}

/// The value of one cell as stored: text (shared, inline or a formula's text), a number, a boolean, or an error.
public enum CellValue: Sendable, Hashable {
    case text(String)
    case number(Double)
    case bool(Bool)
    /// A formula's error (`#N/A`), kept so it can be reported rather than read as text.
    case error(String)

    /// The value as the text a person would see typed: `3` for 3.0, `TRUE` for a boolean.
    public var text: String {
        switch self {
        case .text(let text): return text
        case .number(let number):
            if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
            return String(number)
        case .bool(let value): return value ? "TRUE" : "FALSE"
        case .error(let code): return code
        }
    }
}

/// A cell's place in a sheet in A1 notation: 1-based row, 0-based column (`B14` is row 14, column 1).
public struct CellReference: Sendable, Hashable, CustomStringConvertible {
    public var row: Int
    public var column: Int

    public init(row: Int, column: Int) {
        self.row = row
        self.column = column
    }

    /// Reads `B14` (letters then digits; a `$` before either is allowed). Nil when it is not a cell reference,
    /// or names a column or row past the given limits (checked before the number can overflow).
    public init?(_ text: Substring, maximumRow: Int, maximumColumn: Int) {
        var column = 0
        var row = 0
        var letters = 0
        var digits = 0
        for scalar in text.unicodeScalars {
            switch scalar {
            case "$" where digits == 0: continue
            case "A"..."Z" where digits == 0, "a"..."z" where digits == 0:
                let value = Int(scalar.value & 0x1F)
                column = column * 26 + value
                letters += 1
                if column > maximumColumn + 1 { return nil }
            case "0"..."9" where letters > 0:
                row = row * 10 + Int(scalar.value - 48)
                digits += 1
                if row > maximumRow { return nil }
            default:
                return nil
            }
        }
        guard letters > 0, digits > 0, row >= 1 else { return nil }
        self.row = row
        self.column = column - 1
    }

    /// The column's letters: 0 is A, 25 is Z, 26 is AA.
    public static func letters(ofColumn column: Int) -> String {
        var number = column + 1
        var letters: [Character] = []
        while number > 0 {
            let remainder = (number - 1) % 26
            letters.append(Character(UnicodeScalar(UInt8(65 + remainder))))
            number = (number - 1) / 26
        }
        return String(letters.reversed())
    }

    public var description: String { "\(Self.letters(ofColumn: column))\(row)" }
}

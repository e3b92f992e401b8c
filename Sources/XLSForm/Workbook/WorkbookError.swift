/// Why a workbook could not be read: what was wrong, where (a part of the archive or a cell), and what to do.
public struct WorkbookError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `survey!B14`, a sheet's name, or the part of the archive (`xl/workbook.xml`); nil for the file as a whole.
    public var place: String?
    public var message: String
    public var fix: String

    public init(place: String? = nil, _ message: String, fix: String) {
        self.place = place
        self.message = message
        self.fix = fix
    }

    public var description: String { (place.map { "\($0): " } ?? "") + message + " " + fix }
}

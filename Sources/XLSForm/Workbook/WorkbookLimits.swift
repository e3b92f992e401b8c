/// How much of a workbook is read before it is refused: every limit is checked before the part it guards is
/// inflated or kept, so a zip bomb or a sheet of a million rows is an error, not a full memory.
public struct WorkbookLimits: Sendable, Hashable {
    /// The .xlsx file itself.
    public var maximumFileBytes = 16 << 20
    /// Entries in the zip archive (a form's workbook has about a dozen).
    public var maximumEntries = 1_000
    /// One XML part once inflated (a sheet, the shared strings).
    public var maximumPartBytes = 32 << 20
    /// All the parts read, once inflated.
    public var maximumTotalBytes = 64 << 20
    /// Sheets in the workbook.
    public var maximumSheets = 64
    /// Rows of one sheet (the highest row number a cell may have).
    public var maximumRows = 20_000
    /// Columns of one sheet (the highest column a cell may have: 256 is IV, as many as an .xls sheet holds).
    public var maximumColumns = 256
    /// Characters of one cell.
    public var maximumCellLength = 8_192
    /// Entries of the shared-strings table.
    public var maximumSharedStrings = 500_000

    public init() {}
}

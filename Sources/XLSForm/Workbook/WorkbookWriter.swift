import Foundation
import ZIPFoundation

/// Writes a minimal .xlsx workbook (ZIPFoundation for the archive): the fixture the tests and the benchmark
/// make workbooks with, in either of the ways spreadsheet programs store text (shared or inline strings).
public struct WorkbookWriter: Sendable {
    /// Store text in the shared-strings table (as Excel does) rather than inline in each cell.
    public var sharedStrings: Bool
    /// Leave out each cell's `r` reference (cells then follow each other), as some writers do.
    public var omitReferences = false

    public init(sharedStrings: Bool = true) {
        self.sharedStrings = sharedStrings
    }

    /// The workbook's bytes: `sheets` in order, each a list of rows of cells (nil: an empty cell).
    public func write(_ sheets: [(name: String, rows: [[CellValue?]])]) throws -> Data {
        var strings: [String] = []
        var stringIndex: [String: Int] = [:]
        var parts: [(String, Data)] = []
        for (index, sheet) in sheets.enumerated() {
            var xml = #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>"#
            for (rowIndex, row) in sheet.rows.enumerated() {
                xml += omitReferences ? "<row>" : #"<row r="\#(rowIndex + 1)">"#
                for (column, cell) in row.enumerated() {
                    let reference = omitReferences ? "" : #" r="\#(CellReference(row: rowIndex + 1, column: column))""#
                    guard let cell else {
                        if omitReferences { xml += "<c/>" }
                        continue
                    }
                    switch cell {
                    case .text(let text) where sharedStrings:
                        let position = stringIndex[text] ?? strings.count
                        if position == strings.count {
                            strings.append(text)
                            stringIndex[text] = position
                        }
                        xml += #"<c\#(reference) t="s"><v>\#(position)</v></c>"#
                    case .text(let text):
                        xml += #"<c\#(reference) t="inlineStr"><is><t xml:space="preserve">\#(Self.escape(text))</t></is></c>"#
                    case .number(let number):
                        xml += "<c\(reference)><v>\(number)</v></c>"
                    case .bool(let value):
                        xml += #"<c\#(reference) t="b"><v>\#(value ? 1 : 0)</v></c>"#
                    case .error(let code):
                        xml += #"<c\#(reference) t="e"><v>\#(Self.escape(code))</v></c>"#
                    }
                }
                xml += "</row>"
            }
            xml += "</sheetData></worksheet>"
            parts.append(("xl/worksheets/sheet\(index + 1).xml", Data(xml.utf8)))
        }
        let sheetList = sheets.enumerated().map { #"<sheet name="\#(Self.escape($1.name))" sheetId="\#($0 + 1)" r:id="rId\#($0 + 1)"/>"# }.joined()
        parts.append(("xl/workbook.xml", Data((#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>"# + sheetList + "</sheets></workbook>").utf8)))
        var relationships = sheets.indices.map { #"<Relationship Id="rId\#($0 + 1)" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet\#($0 + 1).xml"/>"# }.joined()
        if sharedStrings {
            relationships += #"<Relationship Id="rIdStrings" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>"#
            let items = strings.map { #"<si><t xml:space="preserve">\#(Self.escape($0))</t></si>"# }.joined()
            parts.append(("xl/sharedStrings.xml", Data((#"<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="\#(strings.count)" uniqueCount="\#(strings.count)">"# + items + "</sst>").utf8)))
        }
        parts.append(("xl/_rels/workbook.xml.rels", Data((#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"# + relationships + "</Relationships>").utf8)))
        parts.append(("[Content_Types].xml", Data(#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>"#.utf8)))
        return try Self.zip(parts)
    }

    /// A zip archive of `entries` (deflated), for workbooks and for archives that are not workbooks.
    public static func zip(_ entries: [(String, Data)]) throws -> Data {
        let archive = try Archive(data: Data(), accessMode: .create)
        for (path, data) in entries {
            try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), modificationDate: Date(timeIntervalSince1970: 1_767_225_600),
                                 compressionMethod: .deflate) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        guard let bytes = archive.data else { throw CocoaError(.fileWriteUnknown) }
        return bytes
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

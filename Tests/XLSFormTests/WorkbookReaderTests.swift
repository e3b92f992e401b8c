import Foundation
import Testing
@testable import XLSForm

@Suite struct WorkbookReaderTests {
    @Test(arguments: [true, false])
    func readsTextNumbersAndBooleansWithSharedOrInlineStrings(shared: Bool) throws {
        let data = try WorkbookWriter(sharedStrings: shared).write([
            ("survey", [[.text("type"), .text("name"), nil, .text("label")], [.text("integer"), .number(3), .bool(true), .text("Größe & <Maß>")]]),
        ])
        let workbook = try WorkbookReader().read(data)
        let sheet = try #require(workbook.sheet(named: "SURVEY"))
        #expect(sheet.rows.count == 2)
        #expect(sheet.rows[1].cells[0] == .text("integer"))
        #expect(sheet.rows[1].cells[1] == .number(3))
        #expect(sheet.rows[1].cells[1]?.text == "3")
        #expect(sheet.rows[1].cells[2] == .bool(true))
        #expect(sheet.rows[1].cells[3] == .text("Größe & <Maß>"))
        #expect(sheet.rows[0].cells[2] == nil)
    }

    @Test func placesSparseCellsByTheirReferenceAndFollowsCellsWithout() throws {
        let sheet = #"<worksheet><sheetData><row r="2"><c r="C2" t="inlineStr"><is><t>third</t></is></c></row><row><c t="inlineStr"><is><t>a</t></is></c><c r="D3"/></row><row r="9"><c r="AA9"><v>1.5</v></c></row></sheetData></worksheet>"#
        let workbook = try WorkbookReader().read(try Self.archive(sheet: sheet))
        let rows = try #require(workbook.sheets.first?.rows)
        #expect(rows.map(\.number) == [2, 3, 9])
        #expect(rows[0].cells[2] == .text("third"))
        #expect(rows[1].cells == [0: .text("a")])  // a cell without a reference follows the previous one; D3 is empty
        #expect(rows[2].cells[26] == .number(1.5))
    }

    @Test func joinsRichTextRunsAndLeavesOutPhoneticGuides() throws {
        let strings = #"<sst><si><r><t>Site </t></r><r><rPr><b/></rPr><t>name</t></r><rPh><t>サイト</t></rPh></si></sst>"#
        let sheet = #"<worksheet><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData></worksheet>"#
        let workbook = try WorkbookReader().read(try Self.archive(sheet: sheet, sharedStrings: strings))
        #expect(workbook.sheets.first?.rows.first?.cells[0] == .text("Site name"))
    }

    @Test func refusesWhatIsNotAWorkbook() throws {
        let csv = Data("type,name\ntext,a\n".utf8)
        #expect(Self.error { try WorkbookReader().read(csv) }?.message.contains("not an .xlsx workbook") == true)
        let xls = Data([0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1])
        #expect(Self.error { try WorkbookReader().read(xls) }?.message.contains("Excel 97-2003") == true)
        let zip = try WorkbookWriter.zip([("notes.txt", Data("hello".utf8))])
        #expect(Self.error { try WorkbookReader().read(zip) }?.message.contains("no xl/workbook.xml") == true)
    }

    @Test func refusesDocumentTypesSoNoEntityCanExpand() throws {
        let sheet = #"<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY lol "lol">]><worksheet><sheetData/></worksheet>"#
        let error = Self.error { try WorkbookReader().read(try Self.archive(sheet: sheet)) }
        #expect(error?.message.contains("document type") == true)
    }

    /// The document-type guard reads bytes; a part in UTF-16 hides `<!DOCTYPE` from it, and the XML parser
    /// decodes UTF-16 by itself. Such a part (an entity bomb, or an external entity cutting a label short) is
    /// refused whole, with or without a byte order mark, in a sheet or in the shared strings.
    @Test(arguments: [String.Encoding.utf16LittleEndian, .utf16BigEndian, .utf16, .utf32LittleEndian])
    func aPartInUTF16IsRefusedSoNoDocumentTypeHidesFromTheGuard(encoding: String.Encoding) throws {
        let laughs = #"<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>&lol3;</t></is></c></row></sheetData></worksheet>"#
        let external = #"<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE sst [<!ENTITY xxe SYSTEM "file:///etc/hostname">]><sst><si><t>LEAK[&xxe;]</t></si></sst>"#
        let sheet = #"<worksheet><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData></worksheet>"#
        let laughsData = try #require(laughs.data(using: encoding))
        let externalData = try #require(external.data(using: encoding))
        let parts: [(sheet: Data, strings: Data?, place: String)] = [(laughsData, nil, "Sheet"), (Data(sheet.utf8), externalData, "xl/sharedStrings.xml")]
        for (sheetData, strings, part) in parts {
            let error = Self.error { try WorkbookReader().read(try Self.archive(sheetData: sheetData, sharedStrings: strings)) }
            #expect(error?.place == part)
            #expect(error?.message.contains("not UTF-8") == true, "\(String(describing: error))")
        }
    }

    @Test func aPartDeclaringAnotherEncodingIsRefusedAndUTF8InAnyFormIsRead() throws {
        let body = #"<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Maß</t></is></c></row></sheetData></worksheet>"#
        for declaration in [#"<?xml version="1.0" encoding="UTF-7"?>"#, #"<?xml version="1.0" encoding='ISO-8859-1'?>"#, #"<?xml version="1.0" encoding=UTF-8?>"#] {
            let error = Self.error { try WorkbookReader().read(try Self.archive(sheet: declaration + body)) }
            #expect(error?.place == "Sheet", "\(declaration)")
            #expect(error?.message.contains("encoding") == true, "\(String(describing: error))")
        }
        let latin1 = try #require((#"<?xml version="1.0"?>"# + body).data(using: .isoLatin1))
        #expect(Self.error { try WorkbookReader().read(try Self.archive(sheetData: latin1)) }?.message.contains("not UTF-8") == true)
        for prefix in ["", #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#, "\u{FEFF}<?xml version='1.0' encoding = 'utf-8'?>\r\n"] {
            let workbook = try WorkbookReader().read(try Self.archive(sheet: prefix + body))
            #expect(workbook.sheets.first?.rows.first?.cells[0] == .text("Maß"), "\(prefix)")
        }
    }

    /// Found by the xlsform fuzz target: an entry whose local header lies past the end of the archive made the
    /// zip library read past its in-memory bytes (a trap that ends the process). It is an error.
    @Test func anEntryPointingPastTheEndOfTheArchiveIsRefusedNotACrash() throws {
        var bytes = try Self.archive(sheet: #"<worksheet><sheetData/></worksheet>"#)
        let name = Data("xl/worksheets/sheet1.xml".utf8)
        var index = bytes.startIndex
        var patched = 0
        while let found = bytes[index...].firstRange(of: name) {
            // Central directory header: signature 0x02014b50, the local header's offset at +42, the name at +46.
            let header = found.lowerBound - 46
            if header >= bytes.startIndex, Array(bytes[header..<header + 4]) == [0x50, 0x4B, 0x01, 0x02] {
                bytes.replaceSubrange(header + 42..<header + 46, with: [0xF0, 0xFF, 0xFF, 0x00])
                patched += 1
            }
            index = found.upperBound
        }
        #expect(patched == 1)
        let error = Self.error { try WorkbookReader().read(bytes) }
        #expect(error != nil)
        // The fuzzer's own inputs, kept as seeds of the fuzz target: the one that trapped, and one whose damaged
        // stream was inflated forever; each is an error now, the second within a bound.
        let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/corpus/xlsform")
        for name in ["crash-entry-past-end.xlsx", "hang-damaged-stream.xlsx"] {
            let found = try Data(contentsOf: seeds.appendingPathComponent(name))
            let started = Date()
            #expect(Self.error { try WorkbookReader().read(found) } != nil, "\(name)")
            #expect(Date().timeIntervalSince(started) < 10, "\(name) took \(Date().timeIntervalSince(started)) s")
        }
    }

    @Test func aPartLargerThanItsLimitIsRefusedBeforeItIsInflated() throws {
        var limits = WorkbookLimits()
        limits.maximumPartBytes = 1 << 20
        let padding = String(repeating: " ", count: 3 << 20)
        let sheet = "<worksheet>\(padding)<sheetData/></worksheet>"
        let error = Self.error { try WorkbookReader(limits: limits).read(try Self.archive(sheet: sheet)) }
        #expect(error?.place == "xl/worksheets/sheet1.xml")
        #expect(error?.message.contains("inflates to more than 1 MiB") == true)
    }

    @Test func aZipBombThatUnderstatesItsSizeIsStoppedAtTheLimit() throws {
        var limits = WorkbookLimits()
        limits.maximumPartBytes = 1 << 20
        let sheet = "<worksheet>\(String(repeating: " ", count: 8 << 20))<sheetData/></worksheet>"
        var bytes = try Self.archive(sheet: sheet)
        // Declare the sheet's uncompressed size as 100 bytes in its local and central headers.
        Self.understateSizes(of: "xl/worksheets/sheet1.xml", in: &bytes)
        let error = Self.error { try WorkbookReader(limits: limits).read(bytes) }
        #expect(error?.message.contains("inflates to more than 1 MiB") == true, "\(String(describing: error))")
    }

    @Test func valuesPastTheRowOrColumnLimitAreRefusedNamingTheCell() throws {
        var limits = WorkbookLimits()
        limits.maximumRows = 10
        limits.maximumColumns = 5
        let farRow = #"<worksheet><sheetData><row r="11"><c r="A11" t="inlineStr"><is><t>x</t></is></c></row></sheetData></worksheet>"#
        #expect(Self.error { try WorkbookReader(limits: limits).read(try Self.archive(sheet: farRow)) }?.place == "Sheet!A11")
        let farColumn = #"<worksheet><sheetData><row r="1"><c r="F1"><v>1</v></c></row></sheetData></worksheet>"#
        #expect(Self.error { try WorkbookReader(limits: limits).read(try Self.archive(sheet: farColumn)) }?.place == "Sheet!F1")
        // Formatted empty cells far away, as spreadsheet programs write them, are not values.
        let formatted = #"<worksheet><sheetData><row r="1"><c r="A1"><v>1</v></c><c r="AMJ1" s="3"/></row><row r="900000"><c r="A900000" s="1"/></row></sheetData></worksheet>"#
        #expect(try WorkbookReader(limits: limits).read(try Self.archive(sheet: formatted)).sheets.first?.rows.count == 1)
    }

    @Test func aCellLongerThanTheLimitIsRefusedNamingIt() throws {
        var limits = WorkbookLimits()
        limits.maximumCellLength = 100
        let sheet = #"<worksheet><sheetData><row r="3"><c r="B3" t="inlineStr"><is><t>\#(String(repeating: "x", count: 101))</t></is></c></row></sheetData></worksheet>"#
        let error = Self.error { try WorkbookReader(limits: limits).read(try Self.archive(sheet: sheet)) }
        #expect(error?.place == "Sheet!B3")
        #expect(error?.message.contains("more than 100 characters") == true)
    }

    @Test func tooManyEntriesOrSheetsAreRefused() throws {
        var limits = WorkbookLimits()
        limits.maximumEntries = 5
        let entries = (0..<6).map { ("junk/\($0).txt", Data("x".utf8)) }
        #expect(Self.error { try WorkbookReader(limits: limits).read(try WorkbookWriter.zip(entries)) }?.message.contains("more than 5 entries") == true)
        limits = WorkbookLimits()
        limits.maximumSheets = 2
        let data = try WorkbookWriter().write([("a", []), ("b", []), ("c", [])])
        #expect(Self.error { try WorkbookReader(limits: limits).read(data) }?.message.contains("more than 2 sheets") == true)
    }

    // MARK: - Helpers

    static func error(_ body: () throws -> Workbook) -> WorkbookError? {
        do {
            _ = try body()
            return nil
        } catch let error as WorkbookError {
            return error
        } catch {
            return WorkbookError("unexpected \(error)", fix: "")
        }
    }

    /// A workbook of one sheet ("Sheet") whose XML is given as is.
    static func archive(sheet: String, sharedStrings: String? = nil) throws -> Data {
        try archive(sheetData: Data(sheet.utf8), sharedStrings: sharedStrings.map { Data($0.utf8) })
    }

    /// A workbook of one sheet ("Sheet") whose part's bytes are given as they are.
    static func archive(sheetData: Data, sharedStrings: Data? = nil) throws -> Data {
        var entries: [(String, Data)] = [
            ("xl/workbook.xml", Data(#"<workbook xmlns:r="r"><sheets><sheet name="Sheet" sheetId="1" r:id="rId1"/></sheets></workbook>"#.utf8)),
            ("xl/_rels/workbook.xml.rels", Data(#"<Relationships><Relationship Id="rId1" Type="t/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#.utf8)),
            ("xl/worksheets/sheet1.xml", sheetData),
        ]
        if let sharedStrings { entries.append(("xl/sharedStrings.xml", sharedStrings)) }
        return try WorkbookWriter.zip(entries)
    }

    /// Rewrites the uncompressed size of `path` in the zip's local and central headers to 100 bytes.
    static func understateSizes(of path: String, in bytes: inout Data) {
        let name = Data(path.utf8)
        var index = bytes.startIndex
        while let found = bytes[index...].firstRange(of: name) {
            // Local header: signature 0x04034b50, size at +22, name at +30. Central: 0x02014b50, size at +24, name at +46.
            for (offset, sizeOffset, signature) in [(30, 22, [0x50, 0x4B, 0x03, 0x04]), (46, 24, [0x50, 0x4B, 0x01, 0x02])] {
                let header = found.lowerBound - offset
                if header >= bytes.startIndex, Array(bytes[header..<header + 4]) == signature.map(UInt8.init) {
                    bytes.replaceSubrange(header + sizeOffset..<header + sizeOffset + 4, with: [100, 0, 0, 0])
                }
            }
            index = found.upperBound
        }
    }
}

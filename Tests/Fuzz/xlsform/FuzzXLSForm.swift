import Foundation
import FormModel
import XLSForm

// libFuzzer entry point: any bytes as an XLSForm workbook — read (zip archive, XML parts, shared strings,
// cells), converted, loaded and linted, and a form that loads gets its defaults and validation run. Built by
// Tests/Fuzz/run.sh. Input that starts with "PK" is read as the .xlsx file itself; any other input is the
// text of the parts, split at lines "%%": the survey sheet, the choices sheet, the settings sheet, the
// shared strings, zipped with a workbook part naming them, so mutations reach the XML and the conversion
// rather than stopping at the archive's checksums.
let separator = Data("\n%%\n".utf8)
let reader = WorkbookReader()

func parts(_ data: Data) -> [Data] {
    var parts: [Data] = []
    var rest = data[...]
    while parts.count < 3, let found = rest.firstRange(of: separator) {
        parts.append(Data(rest[..<found.lowerBound]))
        rest = rest[found.upperBound...]
    }
    parts.append(Data(rest))
    return parts
}

func archive(_ data: Data) -> Data? {
    let given = parts(data)
    let names = ["survey", "choices", "settings"]
    var entries: [(String, Data)] = []
    var sheets = "", relationships = ""
    for (index, part) in given.prefix(3).enumerated() {
        sheets += #"<sheet name="\#(names[index])" sheetId="\#(index + 1)" r:id="rId\#(index + 1)"/>"#
        relationships += #"<Relationship Id="rId\#(index + 1)" Type="t/worksheet" Target="worksheets/sheet\#(index + 1).xml"/>"#
        entries.append(("xl/worksheets/sheet\(index + 1).xml", part))
    }
    if given.count > 3 {
        relationships += #"<Relationship Id="rIdS" Type="t/sharedStrings" Target="sharedStrings.xml"/>"#
        entries.append(("xl/sharedStrings.xml", given[3]))
    }
    entries.append(("xl/workbook.xml", Data(#"<workbook xmlns:r="r"><sheets>\#(sheets)</sheets></workbook>"#.utf8)))
    entries.append(("xl/_rels/workbook.xml.rels", Data("<Relationships>\(relationships)</Relationships>".utf8)))
    return try? WorkbookWriter.zip(entries)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXLSForm(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Data(UnsafeBufferPointer(start: data, count: size))
    guard let bytes = input.starts(with: [0x50, 0x4B]) ? input : archive(input) else { return 0 }
    let workbook: Workbook
    do {
        workbook = try reader.read(bytes)
    } catch {
        _ = error.description
        return 0
    }
    let result = XLSFormImporter().load(workbook, file: "fuzz.xlsx")
    for finding in result.findings { _ = finding.description }
    guard let loaded = result.loaded else { return 0 }
    _ = FormLinter().lint([loaded])
    let validator = FormValidator(form: loaded.form)
    var answers = validator.defaults
    for field in loaded.form.allFields where answers[field.id] == nil {
        answers[field.id] = AnswerValue.parse("3", for: field)
    }
    _ = validator.validate(answers)
    return 0
}

import Foundation
import FormModel
import XLSForm

/// `make bench`, XLSForm import: a workbook of `questions` questions (20 pages of groups, every fifth a
/// select_one with a relevance condition and a constraint, shared strings as Excel writes them) read,
/// converted and loaded as `fieldsheet forms import` does. Target: under a second, memory bounded.
func benchXLSFormImport(questions: Int = 2_000, in directory: URL) throws {
    var survey: [[CellValue?]] = [["type", "name", "label", "relevant", "constraint", "hint"].map { .text($0) }]
    let perPage = questions / 20
    for page in 0..<20 {
        survey.append([.text("begin_group"), .text("page\(page)"), .text("Page \(page + 1)"), nil, nil, nil])
        for index in 0..<perPage {
            let number = page * perPage + index
            if number % 5 == 4 {
                survey.append([.text("select_one levels"), .text("q\(number)"), .text("Question \(number)"),
                               .text("${q\(number - 1)} > 3"), nil, .text("Pick the level seen")])
            } else {
                survey.append([.text("integer"), .text("q\(number)"), .text("Question \(number)"), nil, .text(". >= 0 and . < 1000"), nil])
            }
        }
        survey.append([.text("end_group")])
    }
    let choices: [[CellValue?]] = [["list_name", "name", "label"].map { .text($0) }] + ["low", "medium", "high"].map { [.text("levels"), .text($0), .text($0.capitalized)] }
    let settings: [[CellValue?]] = [[.text("form_title"), .text("form_id")], [.text("Large Survey"), .text("large-survey")]]
    let file = directory.appendingPathComponent("large-\(questions).xlsx")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try WorkbookWriter().write([("survey", survey), ("choices", choices), ("settings", settings)]).write(to: file)
    let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
    let rssBefore = residentMiB()
    var samples: [UInt64] = []
    for _ in 0..<10 {
        let start = nanos()
        let result = XLSFormImporter().load(contentsOf: file.path)
        samples.append(nanos() - start)
        guard result.loaded?.form.allFields.count == questions else {
            fatalError("the \(questions)-question workbook did not import: \(result.findings.prefix(3).map(\.description))")
        }
    }
    report("XLSForm import of \(questions) questions (\(size / 1024) KiB .xlsx: read, convert, load)", samples, target: "p99 < 1000 ms")
    // Where the time goes: reading the workbook, converting it, loading the JSON it converts to.
    var reading: [UInt64] = [], converting: [UInt64] = [], loading: [UInt64] = []
    for _ in 0..<5 {
        let start = nanos()
        let workbook = try WorkbookReader().read(contentsOf: file.path, sheets: { name, _ in ["survey", "choices", "settings"].contains(name) })
        let read = nanos()
        let result = XLSFormImporter().load(workbook, file: file.path)
        let converted = nanos()
        _ = FormLoader().load(Data((result.definition ?? "").utf8), file: "large.json")
        let loaded = nanos()
        reading.append(read - start)
        loading.append(loaded - converted)
        converting.append((converted - read) > (loaded - converted) ? (converted - read) - (loaded - converted) : 0)
    }
    print("  of which: reading the .xlsx p50 \(milliseconds(percentiles(reading).p50)), converting p50 \(milliseconds(percentiles(converting).p50)), loading the JSON (schema, checks) p50 \(milliseconds(percentiles(loading).p50))")
    print(String(format: "XLSForm import of %d questions: peak RSS %.1f MiB (%.1f MiB before importing; limits: 64 MiB of XML, 20,000 rows)",
                 questions, peakResidentMiB(), rssBefore))
}

/// The process's peak resident set size in MiB, from /proc/self/status.
func peakResidentMiB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kib = Double(line.split(separator: " ")[1])
    else { return 0 }
    return kib / 1024
}

import Foundation
import FormModel
import ServerStorage

/// Streams one form's records as CSV or JSON Lines, a page at a time: memory stays flat however many
/// records there are.
public struct RecordExporter: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case csv
        case jsonl
    }

    struct Line: Encodable {
        var recordId: UUID
        var formVersion: Int
        var state: String
        var author: String
        var revision: Int64
        var values: [String: AnswerValue]
    }

    let storage: any ServerStorage
    let pageSize: Int

    public init(storage: any ServerStorage, pageSize: Int = 500) {
        self.storage = storage
        self.pageSize = pageSize
    }

    /// Writes every record of `formId` through `write`, one line per call; returns how many.
    @discardableResult
    public func export(projectId: Int64, formId: String, format: Format, write: (String) throws -> Void) async throws -> Int {
        let versions = try await storage.forms(projectId: projectId).filter { $0.formId == formId }
        var columns: [String] = []
        for version in versions.reversed() {
            for field in version.definition.allFields where field.kind.takesAnswer && !columns.contains(field.id) { columns.append(field.id) }
        }
        let latestFields = Dictionary(versions.flatMap(\.definition.allFields).map { ($0.id, $0) }, uniquingKeysWith: { _, new in new })
        if format == .csv {
            try write((["recordId", "formVersion", "state", "author", "revision"] + columns).map(Self.csvField).joined(separator: ",") + "\r\n")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var after: UUID?
        var count = 0
        while true {
            let page = try await storage.records(projectId: projectId, formId: formId, after: after, limit: pageSize)
            for record in page {
                let values = record.fields.values
                switch format {
                case .csv:
                    let fixed = [record.id.uuidString, String(record.formVersion), record.state.rawValue, record.authorName, String(record.revision)]
                    let answers = columns.map { values[$0]?.display(for: latestFields[$0].map { field in Self.unlabelled(field) }) ?? "" }
                    try write((fixed + answers).map(Self.csvField).joined(separator: ",") + "\r\n")
                case .jsonl:
                    let line = Line(recordId: record.id, formVersion: record.formVersion, state: record.state.rawValue, author: record.authorName, revision: record.revision, values: values)
                    try write(String(decoding: try encoder.encode(line), as: UTF8.self) + "\n")
                }
                count += 1
            }
            guard page.count == pageSize, let last = page.last else { return count }
            after = last.id
        }
    }

    /// The field without choice labels, so CSV cells hold the stored choice values.
    static func unlabelled(_ field: FieldDefinition) -> FieldDefinition {
        var field = field
        field.choices = nil
        return field
    }

    /// RFC 4180 quoting; no raw control characters (line breaks inside a quoted cell become `\n`, any other
    /// control shows as its visible symbol, as on a terminal: ESC as `␛`); and a leading quote for cells a
    /// spreadsheet would run as a formula (starting with =, +, -, @, tab or carriage return, and not a number).
    static func csvField(_ text: String) -> String {
        let formulaStarts: Set<Character> = ["=", "+", "-", "@", "\t", "\r"]
        var text = text
        if let first = text.first, formulaStarts.contains(first) || first.unicodeScalars.first == "\r", Double(text) == nil { text = "'" + text }
        text = TerminalText.visible(
            text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n"), allowing: ["\n"])
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

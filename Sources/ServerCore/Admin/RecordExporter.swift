import Foundation
import FormModel
import ServerStorage

/// Streams one form's records as CSV or JSON Lines, a page at a time: memory stays flat however many
/// records there are. Each record comes with its review state and comment, author, first device, and the
/// times the server first stored, first saw submitted and last changed it; in CSV a location answer is
/// split into latitude, longitude and accuracy columns.
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
        var reviewState: String?
        var reviewComment: String?
        var device: String?
        var createdAt: String?
        var submittedAt: String?
        var updatedAt: String?
        var values: [String: AnswerValue]
    }

    /// The columns every CSV row starts with, before the fields'.
    static let recordColumns = [
        "recordId", "formVersion", "state", "author", "revision",
        "reviewState", "reviewComment", "device", "createdAt", "submittedAt", "updatedAt",
    ]

    /// The record's own columns: identity, review, device and times (RFC 3339, UTC).
    static func recordCells(_ record: StoredRecord) -> [String] {
        [record.id.uuidString, String(record.formVersion), record.state.rawValue, record.authorName, String(record.revision),
         record.review?.state.rawValue ?? "", record.review?.comment ?? "", record.device ?? "",
         record.times.created.map(Timestamp.string) ?? "", record.times.submitted.map(Timestamp.string) ?? "",
         record.times.updated.map(Timestamp.string) ?? ""]
    }

    /// A field's CSV columns: one, or three for a location (`id.latitude`, `id.longitude`, `id.accuracy`).
    static func headers(_ field: FieldDefinition) -> [String] {
        field.kind == .location ? ["latitude", "longitude", "accuracy"].map { "\(field.id).\($0)" } : [field.id]
    }

    /// A field's cells; a location answer split into its numbers (what does not fit stays in the first cell).
    static func cells(_ value: AnswerValue?, field: FieldDefinition?) -> [String] {
        guard let field, field.kind == .location else {
            return [value?.display(for: field.map { unlabelled($0) }) ?? ""]
        }
        switch value {
        case .location(let location)?:
            return [String(location.latitude), String(location.longitude), location.accuracy.map { String($0) } ?? ""]
        case let other?:
            return [other.display(for: field), "", ""]
        case nil:
            return ["", "", ""]
        }
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
            let fieldHeaders = columns.flatMap { id in latestFields[id].map(Self.headers) ?? [id] }
            try write((Self.recordColumns + fieldHeaders).map(Self.csvField).joined(separator: ",") + "\r\n")
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
                    let answers = columns.flatMap { Self.cells(values[$0], field: latestFields[$0]) }
                    try write((Self.recordCells(record) + answers).map(Self.csvField).joined(separator: ",") + "\r\n")
                case .jsonl:
                    let line = Line(
                        recordId: record.id, formVersion: record.formVersion, state: record.state.rawValue, author: record.authorName,
                        revision: record.revision, reviewState: record.review?.state.rawValue, reviewComment: record.review?.comment,
                        device: record.device, createdAt: record.times.created.map(Timestamp.string),
                        submittedAt: record.times.submitted.map(Timestamp.string), updatedAt: record.times.updated.map(Timestamp.string),
                        values: values)
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

import Foundation
import FormModel
import ServerStorage
import SyncCore

/// Streams one form's records as CSV or JSON Lines, a page at a time: memory stays flat however many
/// records there are. Each record comes with its review state and comment, author, first device, its times
/// where they happened (created, last submitted, last changed: on the author's device, or the server for a
/// change made there) and when the server received its latest change; in CSV a location answer is split
/// into latitude, longitude and accuracy columns.
public struct RecordExporter: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case csv
        case jsonl
    }

    /// One JSON Lines line, written with `JSONWriter` (keys in sorted order, slashes as they are).
    struct Line {
        /// Lower case, as every id the server writes.
        var recordID: String
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
        var receivedAt: String?
        /// Top-level answers and computed values.
        var values: [String: AnswerValue]
        /// Each repeat's live instances, in order, by repeat id.
        var repeats: [String: [InstanceLine]]?
        /// With an attachments directory: the file each attachment answer was written to, by answer key
        /// (`photo`, or `defects/<instance>/photo` in a repeat).
        var files: [String: String]?
    }

    struct InstanceLine {
        var instanceID: String
        var values: [String: AnswerValue]
        var repeats: [String: [InstanceLine]]?
    }

    /// The CSV table of one repeat: its file's name part and columns.
    public struct RepeatTable: Sendable, Hashable {
        /// The repeat's id (`defects`); nested repeats are tables of their own (`actions`).
        public var repeatID: String
        /// The repeat holding this one, for nested repeats.
        public var parentRepeatID: String?
        public var columns: [String]
    }

    /// The columns every CSV row starts with, before the fields'.
    static let recordColumns = [
        "recordId", "formVersion", "state", "author", "revision",
        "reviewState", "reviewComment", "device", "createdAt", "submittedAt", "updatedAt", "receivedAt",
    ]

    /// The record's own columns: identity, review, device and times (RFC 3339, UTC).
    static func recordCells(_ record: StoredRecord) -> [String] {
        [record.id.lowercased, String(record.form.version), record.state.rawValue, record.authorName, String(record.revision),
         record.review?.state.rawValue ?? "", record.review?.comment ?? "", record.device ?? "",
         record.times.created.map(Timestamp.string) ?? "", record.times.submitted.map(Timestamp.string) ?? "",
         record.times.updated.map(Timestamp.string) ?? "", record.receivedAt.map(Timestamp.string) ?? ""]
    }

    /// A field's CSV columns: one, or three for a location (`id.latitude`, `id.longitude`, `id.accuracy`).
    static func headers(_ field: FieldDefinition) -> [String] {
        field.kind == .location ? ["latitude", "longitude", "accuracy"].map { "\(field.id).\($0)" } : [field.id]
    }

    /// A field's cells; a location answer split into its numbers (what does not fit stays in the first cell).
    static func cells(_ value: AnswerValue?, field: FieldDefinition?) -> [String] {
        cells(value, field: field, unlabelled: field.map(unlabelled))
    }

    /// ``cells(_:field:)`` with the field's unlabelled copy made once, not per cell.
    static func cells(_ value: AnswerValue?, field: FieldDefinition?, unlabelled: FieldDefinition?) -> [String] {
        if case .sealed(let sealed)? = value {
            // Sealed to a key the export was not given: said so, with the key that opens it.
            let cell = "\(AnswerValue.sealedDisplay) (key \(sealed.key))"
            return field?.kind == .location ? [cell, "", ""] : [cell]
        }
        guard let field, field.kind == .location else {
            return [value?.display(for: unlabelled) ?? ""]
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
    /// Where to write every referenced attachment (nil: cells show the reference as a person reads it).
    let attachments: AttachmentExport?
    /// Opens the sealed answers of sensitive fields with the project keys given (`--decrypt-with`), and counts
    /// those it could not open.
    public let sealed: SealedAnswerOpener

    /// An exporter reading `storage` a page of `pageSize` records at a time; with `attachmentsDirectory`, every
    /// referenced attachment is written there; with `decryptionKeys` (by key id), sealed answers are written
    /// in clear where their key is among them.
    public init(storage: any ServerStorage, pageSize: Int = 500, attachmentsDirectory: String? = nil, decryptionKeys: [String: ProjectPrivateKey] = [:]) {
        self.storage = storage
        self.pageSize = pageSize
        self.attachments = attachmentsDirectory.map { AttachmentExport(storage: storage, directory: $0) }
        self.sealed = SealedAnswerOpener(keys: decryptionKeys)
    }

    /// The repeat tables a CSV export of `formId` writes besides the records' (empty for a form without repeats).
    public func repeatTables(projectID: Int64, formID: String) async throws -> [RepeatTable] {
        Self.layout(try await storage.forms(projectID: projectID, formID: formID).map(\.definition)).tables
    }

    /// Writes every record of `formId` through `write`, one line per call; returns how many. CSV holds the records'
    /// top-level fields (computed ones included); JSON Lines nests each repeat's instances. For the CSV of a form with
    /// repeats use `export(projectId:formId:write:)`, which writes one table per repeat too.
    @discardableResult
    public func export(projectID: Int64, formID: String, format: Format, write: (String) async throws -> Void) async throws -> Int {
        try await export(projectID: projectID, formID: formID, format: format) { table, line in
            if table == nil { try await write(line) }
        }
    }

    /// The CSV export as tables: `write(nil, line)` for the records' table, `write(repeatId, line)` for each
    /// repeat's, whose rows are the live instances keyed to their record (and parent instance): `recordId`,
    /// `parentInstanceId`, `instanceId`, `position` (1-based), then the repeat's fields. Only the records `include`
    /// accepts are written (the console's exports hold what its viewer may see).
    @discardableResult
    public func export(
        projectID: Int64, formID: String, format: Format = .csv, include: (StoredRecord) -> Bool = { _ in true },
        write: (String?, String) async throws -> Void
    ) async throws -> Int {
        let versions = try await storage.forms(projectID: projectID, formID: formID)
        let layout = Self.layout(versions.map(\.definition))
        let definitions = Dictionary(versions.map { ($0.version, $0.definition) }, uniquingKeysWith: { first, _ in first })
        var logics: [Int: FormLogic] = [:]
        let latestFields = Dictionary(versions.flatMap(\.definition.everyField).map { ($0.id, $0) }, uniquingKeysWith: { _, new in new })
        let unlabelledFields = latestFields.mapValues(Self.unlabelled)
        func cells(_ value: AnswerValue?, _ id: String) -> [String] { Self.cells(value, field: latestFields[id], unlabelled: unlabelledFields[id]) }
        // An attachment answer's cell names its exported file (when there is an attachments directory).
        func cells(_ key: String, _ id: String, _ value: AnswerValue?, _ files: [String: String]) -> [String] {
            if case .attachment(let reference)? = value, attachments != nil {
                return [files[key] ?? AttachmentExport.waiting(reference)]
            }
            return cells(value, id)
        }
        if format == .csv {
            func headers(_ ids: [String]) -> [String] { ids.flatMap { id in latestFields[id].map(Self.headers) ?? [id] } }
            try await write(nil, (Self.recordColumns + headers(layout.columns)).map(Self.csvField).joined(separator: ",") + "\r\n")
            for table in layout.tables {
                try await write(table.repeatID, (["recordId", "parentInstanceId", "instanceId", "position"] + headers(table.columns)).map(Self.csvField).joined(separator: ",") + "\r\n")
            }
        }
        var after: UUID?
        var count = 0
        while true {
            let page = try await storage.records(projectID: projectID, formID: formID, after: after, limit: pageSize)
            for record in page where include(record) {
                let values = try sealed.open(record.fields.values, record: record.id.lowercased)
                let files = try await attachments?.write(record, projectID: projectID) ?? [:]
                let logic: FormLogic?
                if let known = logics[record.form.version] {
                    logic = known
                } else if let definition = definitions[record.form.version] {
                    logic = FormLogic(form: definition)
                    logics[record.form.version] = logic
                } else {
                    logic = nil
                }
                let state = logic.map { FormState(logic: $0, answers: values) }
                func value(_ key: String) -> AnswerValue? { state.map { $0.computed[key] ?? $0.answers[key] } ?? values[key] }
                switch format {
                case .csv:
                    try await write(nil, (Self.recordCells(record) + layout.columns.flatMap { cells($0, $0, value($0), files) }).map(Self.csvField).joined(separator: ",") + "\r\n")
                    guard let state else { break }
                    for table in layout.tables {
                        for (parent, parentID) in Self.parents(of: table, in: state, layout: layout) {
                            for (index, instance) in state.instances.live(table.repeatID, in: parent).enumerated() {
                                let row = [record.id.lowercased, parentID, instance.id, String(index + 1)]
                                    + table.columns.flatMap { cells(instance.prefix + "/" + $0, $0, value(instance.prefix + "/" + $0), files) }
                                try await write(table.repeatID, row.map(Self.csvField).joined(separator: ",") + "\r\n")
                            }
                        }
                    }
                case .jsonl:
                    var top: [String: AnswerValue] = [:]
                    for (key, answer) in values where !key.utf8.contains(UInt8(ascii: "/")) { top[key] = answer }
                    for (key, answer) in state?.computed ?? [:] where !key.utf8.contains(UInt8(ascii: "/")) { top[key] = answer }
                    let repeats = state.map { Self.nested(in: "", ids: layout.topRepeats, state: $0, layout: layout) }
                    let line = Line(
                        recordID: record.id.lowercased, formVersion: record.form.version, state: record.state.rawValue, author: record.authorName,
                        revision: record.revision, reviewState: record.review?.state.rawValue, reviewComment: record.review?.comment,
                        device: record.device, createdAt: record.times.created.map(Timestamp.string),
                        submittedAt: record.times.submitted.map(Timestamp.string), updatedAt: record.times.updated.map(Timestamp.string),
                        receivedAt: record.receivedAt.map(Timestamp.string),
                        values: top, repeats: repeats?.isEmpty == false ? repeats : nil, files: files.isEmpty ? nil : files)
                    var writer = JSONWriter(capacity: 2048)
                    line.write(to: &writer)
                    try await write(nil, String(decoding: writer.bytes, as: UTF8.self) + "\n")
                }
                count += 1
            }
            guard page.count == pageSize, let last = page.last else { return count }
            after = last.id
        }
    }

    /// Columns of every version, newest first (a field keeps its column across versions).
    struct Layout {
        var columns: [String] = []
        var tables: [RepeatTable] = []
        var topRepeats: [String] = []
    }

    static func layout(_ definitions: [FormDefinition]) -> Layout {
        var layout = Layout()
        var tableIndex: [String: Int] = [:]
        for definition in definitions.reversed() {
            let fields = FormFields(form: definition)
            for id in fields.order {
                guard let field = fields.byID[id] else { continue }
                let group = fields.container[id]
                if field.kind == .repeat {
                    if tableIndex[id] == nil {
                        tableIndex[id] = layout.tables.count
                        layout.tables.append(RepeatTable(repeatID: id, parentRepeatID: group, columns: []))
                        if group == nil { layout.topRepeats.append(id) }
                    }
                    continue
                }
                guard field.holdsValue else { continue }
                if let group, let index = tableIndex[group] {
                    if !layout.tables[index].columns.contains(id) { layout.tables[index].columns.append(id) }
                } else if group == nil, !layout.columns.contains(id) {
                    layout.columns.append(id)
                }
            }
        }
        return layout
    }

    /// The places a repeat's instances live in a record (its parent instances), with the parent instance's id.
    static func parents(of table: RepeatTable, in state: FormState, layout: Layout) -> [(String, String)] {
        guard let parentRepeat = table.parentRepeatID else { return [("", "")] }
        guard let parentTable = layout.tables.first(where: { $0.repeatID == parentRepeat }) else { return [] }
        return parents(of: parentTable, in: state, layout: layout).flatMap { grand, _ in
            state.instances.live(parentRepeat, in: grand).map { ($0.prefix, $0.id) }
        }
    }

    /// The live instances of the repeats `ids` at `prefix`, each with its values and its own repeats.
    static func nested(in prefix: String, ids: [String], state: FormState, layout: Layout) -> [String: [InstanceLine]] {
        var result: [String: [InstanceLine]] = [:]
        for id in ids {
            let children = layout.tables.filter { $0.parentRepeatID == id }.map(\.repeatID)
            let columns = layout.tables.first { $0.repeatID == id }?.columns ?? []
            result[id] = state.instances.live(id, in: prefix).map { instance in
                var values: [String: AnswerValue] = [:]
                for column in columns {
                    let key = instance.prefix + "/" + column
                    if let value = state.computed[key] ?? state.answers[key] { values[column] = value }
                }
                let inner = nested(in: instance.prefix, ids: children, state: state, layout: layout)
                return InstanceLine(instanceID: instance.id, values: values, repeats: inner.isEmpty ? nil : inner)
            }
        }
        return result
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
        needsCSVWork(text) ? quotedCSVField(text) : text
    }

    /// Whether a cell needs more than copying: a formula start, or a byte that may begin a control character
    /// (C0, DEL, C1 as `C2 80–9F`, the bidirectional controls as `E2 80–81 …`), a quote, a comma or a line break.
    /// Most cells need nothing, and are read once, byte by byte, without building a string.
    static func needsCSVWork(_ text: String) -> Bool {
        var utf8 = text.utf8.makeIterator()
        guard let first = utf8.next() else { return false }
        switch first {
        case UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"): return true
        default: break
        }
        var byte = first
        while true {
            switch byte {
            case 0x00...0x1F, 0x7F, 0xC2, 0xE2, UInt8(ascii: "\""), UInt8(ascii: ","): return true
            default: break
            }
            guard let next = utf8.next() else { return false }
            byte = next
        }
    }

    static func quotedCSVField(_ text: String) -> String {
        let formulaStarts: Set<Character> = ["=", "+", "-", "@", "\t", "\r"]
        var text = text
        if let first = text.first, formulaStarts.contains(first) || first.unicodeScalars.first == "\r", Double(text) == nil { text = "'" + text }
        text = TerminalText.visible(
            text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n"), allowing: ["\n"])
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

extension RecordExporter.Line {
    /// The line's JSON, members in sorted key order, absent values left out.
    func write(to writer: inout JSONWriter) {
        func member(_ key: String, _ value: String?) {
            guard let value else { return }
            writer.key(key)
            writer.string(value)
        }
        writer.beginObject()
        member("author", author)
        member("createdAt", createdAt)
        member("device", device)
        if let files {
            writer.key("files")
            writer.beginObject()
            for key in files.keys.sorted() {
                writer.key(key)
                writer.string(files[key] ?? "")
            }
            writer.endObject()
        }
        writer.key("formVersion")
        writer.int(formVersion)
        member("receivedAt", receivedAt)
        member("recordId", recordID)
        if let repeats {
            writer.key("repeats")
            RecordExporter.InstanceLine.write(repeats, to: &writer)
        }
        member("reviewComment", reviewComment)
        member("reviewState", reviewState)
        writer.key("revision")
        writer.int(revision)
        member("state", state)
        member("submittedAt", submittedAt)
        member("updatedAt", updatedAt)
        writer.key("values")
        RecordExporter.InstanceLine.write(values, to: &writer)
        writer.endObject()
    }
}

extension RecordExporter.InstanceLine {
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("instanceId")
        writer.string(instanceID)
        if let repeats {
            writer.key("repeats")
            Self.write(repeats, to: &writer)
        }
        writer.key("values")
        Self.write(values, to: &writer)
        writer.endObject()
    }

    /// Answers by key, in key order.
    static func write(_ values: [String: AnswerValue], to writer: inout JSONWriter) {
        writer.beginObject()
        for key in values.keys.sorted() {
            writer.key(key)
            values[key]?.write(to: &writer)
        }
        writer.endObject()
    }

    /// Each repeat's instances, by repeat id in order.
    static func write(_ repeats: [String: [Self]], to writer: inout JSONWriter) {
        writer.beginObject()
        for key in repeats.keys.sorted() {
            writer.key(key)
            writer.beginArray()
            for instance in repeats[key] ?? [] {
                writer.element()
                instance.write(to: &writer)
            }
            writer.endArray()
        }
        writer.endObject()
    }
}

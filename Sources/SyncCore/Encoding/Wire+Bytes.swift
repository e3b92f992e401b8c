import Foundation
import FormModel

// Byte-level readers and writers of the wire shapes on the sync path: the only codec of these types. Each
// writes its members in sorted order with the keys of Schema/openapi.yaml (the wire contract tests hold
// both the members and fixed documents of each shape to it) and reads them in any order, skipping unknown ones.
// This file: what a push sends (mutations and their field changes) and the readers the codec shares; what the
// server answers is in PushResponse+Bytes.swift.

extension JSONReader {
    /// Reads one value with `read` from `bytes`, which must hold that value alone (whitespace around it aside).
    static func whole<Value>(_ bytes: [UInt8], _ read: (inout JSONReader) throws -> Value) throws -> Value {
        var reader = JSONReader(bytes)
        let value = try read(&reader)
        try reader.finish()
        return value
    }
}

extension UUID {
    /// Reads a UUID string.
    static func read(from reader: inout JSONReader, _ what: String) throws -> UUID {
        let text = try reader.readString()
        guard let id = UUID(text: text) else { throw reader.error("\(what) must be a UUID, like 0b7e3f7e-5a43-4c39-9d3c-0e8d9c1f6a21") }
        return id
    }
}

extension RecordState {
    static func read(from reader: inout JSONReader) throws -> RecordState {
        let text = try reader.readString()
        guard let state = RecordState(rawValue: text) else { throw reader.error("state must be draft, submitted or deleted, not \"\(text)\"") }
        return state
    }
}

extension FieldChange {
    /// Reads a field change from its JSON bytes, the whole of them.
    public init(jsonBytes bytes: [UInt8]) throws {
        self = try JSONReader.whole(bytes, Self.read(from:))
    }

    /// The change's JSON bytes (``write(to:)``).
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 96)
        write(to: &writer)
        return writer.bytes
    }

    /// Reads a field change at the reader's position: `value` absent or null clears the field.
    public static func read(from reader: inout JSONReader) throws -> FieldChange {
        var value: AnswerValue?
        var baseRevision: Int64?
        var hlc: Int64?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "value": value = try AnswerValue.readOptional(from: &reader)
            case "baseRevision": baseRevision = try reader.readInt64()
            case "hlc": hlc = try reader.readInt64()
            default: try reader.skipValue()
            }
        }
        guard let baseRevision else { throw reader.error("A field change needs baseRevision") }
        guard let hlc else { throw reader.error("A field change needs hlc") }
        return FieldChange(value: value, baseRevision: baseRevision, hlc: HybridTimestamp(rawValue: hlc))
    }

    /// Writes `baseRevision`, `hlc` and `value` (null for a cleared field).
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("baseRevision")
        writer.int(baseRevision)
        writer.key("hlc")
        writer.int(hlc.rawValue)
        writer.key("value")
        value.write(to: &writer)
        writer.endObject()
    }
}

extension FieldState {
    /// Reads a field state from its JSON bytes, the whole of them.
    public init(jsonBytes bytes: [UInt8]) throws {
        self = try JSONReader.whole(bytes, Self.read(from:))
    }

    /// The state's JSON bytes (``write(to:)``).
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        write(to: &writer)
        return writer.bytes
    }

    /// Reads a field state at the reader's position: `value` absent or null is a cleared field.
    public static func read(from reader: inout JSONReader) throws -> FieldState {
        var value: AnswerValue?
        var revision: Int64?
        var hlc: Int64?
        var clientID: String?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "value": value = try AnswerValue.readOptional(from: &reader)
            case "revision": revision = try reader.readInt64()
            case "hlc": hlc = try reader.readInt64()
            case "clientId": clientID = try reader.readString()
            default: try reader.skipValue()
            }
        }
        guard let revision, let hlc, let clientID else { throw reader.error("A field state needs revision, hlc and clientId") }
        return FieldState(value: value, revision: revision, hlc: HybridTimestamp(rawValue: hlc), clientID: clientID)
    }

    /// Writes `clientId`, `hlc`, `revision` and `value` (null for a cleared field).
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("clientId")
        writer.string(clientID)
        writer.key("hlc")
        writer.int(hlc.rawValue)
        writer.key("revision")
        writer.int(revision)
        writer.key("value")
        value.write(to: &writer)
        writer.endObject()
    }
}

extension Mutation {
    /// Reads a mutation from its JSON bytes, the whole of them (members in any order; unknown ones skipped).
    public init(jsonBytes bytes: [UInt8]) throws {
        self = try JSONReader.whole(bytes, Self.read(from:))
    }

    /// Reads a mutation at the reader's position.
    public static func read(from reader: inout JSONReader) throws -> Mutation {
        var sent: String?
        return try read(from: &reader, recordIDAsSent: &sent)
    }

    /// Reads a mutation and reports its `recordId` exactly as it was written (any case), to echo it.
    public static func read(from reader: inout JSONReader, recordIDAsSent: inout String?) throws -> Mutation {
        var mutationID: String?
        var recordID: UUID?
        var formID: String?
        var formVersion: Int64?
        var state: RecordState?
        var changes: [String: FieldChange]?
        var times = RecordTimes()
        try reader.beginObject()
        while let key = try reader.nextKey() {
            if try times.read(key: key, from: &reader) { continue }
            switch key {
            case "mutationId": mutationID = try reader.readString()
            case "recordId":
                let text = try reader.readString()
                guard let id = UUID(text: text) else { throw reader.error("recordId must be a UUID, like 0b7e3f7e-5a43-4c39-9d3c-0e8d9c1f6a21") }
                recordID = id
                recordIDAsSent = text
            case "formId": formID = try reader.readString()
            case "formVersion": formVersion = try reader.readInt64()
            case "state": state = try RecordState.read(from: &reader)
            case "changes":
                // Read into an array first, then hashed into a dictionary of the right size once: growing the
                // dictionary field by field hashed every key again at each doubling (250 answers: 8 times).
                var read: [(String, FieldChange)] = []
                try reader.beginObject()
                while let field = try reader.nextKey() {
                    do {
                        read.append((field, try FieldChange.read(from: &reader)))
                    } catch var error as JSONReadError {
                        error.path = "changes.\(field)"
                        throw error
                    }
                }
                // A field named twice keeps its last change, as before.
                changes = Dictionary(read, uniquingKeysWith: { $1 })
            default: try reader.skipValue()
            }
        }
        func missing(_ name: String, _ expected: String) -> JSONReadError {
            JSONReadError(offset: reader.offset, message: "A mutation needs \(name): \(expected)", path: name)
        }
        guard let mutationID else { throw missing("mutationId", "a string unique on the device, such as a UUID") }
        guard let recordID else { throw missing("recordId", "the record's UUID") }
        guard let formID else { throw missing("formId", "the id of the record's form") }
        guard let formVersion else { throw missing("formVersion", "the form version the record was started on, a whole number from 1") }
        guard let state else { throw missing("state", "draft, submitted or deleted") }
        guard let changes else { throw missing("changes", "an object of field changes by field id, possibly empty") }
        guard formVersion >= 1, let version = Int(exactly: formVersion) else {
            throw JSONReadError(offset: reader.offset, message: "formVersion must be a whole number from 1, not \(formVersion)", path: "formVersion")
        }
        return Mutation(mutationID: mutationID, recordID: recordID, form: FormKey(id: formID, version: version), state: state, changes: changes, times: times)
    }

    /// Writes the mutation in its canonical form (keys sorted, times only when known); `uppercaseRecordID` is for
    /// ``canonicalBytes()`` alone.
    public func write(to writer: inout JSONWriter, uppercaseRecordID: Bool = false) {
        writer.beginObject()
        writer.key("changes")
        writer.beginObject()
        for field in changes.keys.sorted() {
            writer.key(field)
            changes[field]!.write(to: &writer)
        }
        writer.endObject()
        if let created = times.created {
            writer.key("createdAt")
            writer.int(RecordTimes.millis(created))
        }
        writer.key("formId")
        writer.string(form.id)
        writer.key("formVersion")
        writer.int(form.version)
        writer.key("mutationId")
        writer.string(mutationID)
        writer.key("recordId")
        writer.string(uppercaseRecordID ? recordID.uuidString : recordID.lowercased)
        writer.key("state")
        writer.string(state.rawValue)
        if let submitted = times.submitted {
            writer.key("submittedAt")
            writer.int(RecordTimes.millis(submitted))
        }
        if let updated = times.updated {
            writer.key("updatedAt")
            writer.int(RecordTimes.millis(updated))
        }
        writer.endObject()
    }

    /// The mutation in the form earlier FieldSheet servers hashed to recognise a retry (keys sorted, no
    /// whitespace, `/` escaped, the record id in uppercase): a server compares a stored digest of that form
    /// too, so a retry of a mutation stored before the digest moved to ``jsonBytes()`` is still recognised.
    public func canonicalBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 128 + 64 * changes.count)
        writer.escapesSlashes = true
        write(to: &writer, uppercaseRecordID: true)
        return writer.bytes
    }

    /// The canonical JSON bytes of the mutation (sorted keys), as a device sends it.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 128 + 64 * changes.count)
        write(to: &writer)
        return writer.bytes
    }
}

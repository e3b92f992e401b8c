import FormModel
import Foundation

/// One record as the server holds it, with its fields as the stored ``RecordFields`` JSON: the one
/// representation of a record's envelope, from the server's change feed through a pull page (and
/// `GET …/records/{id}`) to the device that applies it.
///
/// The fields travel as bytes, never decoded on the way: the server copies them from its database into the
/// page, the device from the page into its own. ``fields`` decodes them where a caller needs the values.
/// A side that knows more about a record holds an envelope and its own few extra properties.
///
/// Its JSON (`RecordSnapshot` in Schema/openapi.yaml) is read and written by the byte codec only:
/// ``write(to:)`` and ``read(from:)``.
public struct RecordEnvelope: Sendable, Hashable {
    /// The record's id, made on the device that created it.
    public var recordID: UUID
    /// The form version the record was last written on.
    public var form: FormKey
    /// Draft, submitted or deleted.
    public var state: RecordState
    /// Increases with every applied change to the record.
    public var revision: Int64
    /// The position of the record's latest change in the project's change feed.
    public var sequence: Int64
    /// The name of the user who created the record.
    public var author: String
    /// The review state and latest comment; nil for records never submitted.
    public var review: RecordReview?
    /// When the record was created, last changed and submitted, where that happened.
    public var times: RecordTimes
    /// The SHA-256 of each attachment the record refers to that the server does not hold yet, sorted (pull
    /// pages only; empty elsewhere).
    public var missingAttachments: [String]
    /// The record's ``RecordFields`` JSON, exactly as the server stored it.
    public var fieldsJSON: [UInt8]

    /// An envelope around fields already in their stored JSON form.
    public init(
        recordID: UUID, form: FormKey, state: RecordState, revision: Int64, sequence: Int64, author: String,
        review: RecordReview? = nil, times: RecordTimes = RecordTimes(), missingAttachments: [String] = [], fieldsJSON: [UInt8]
    ) {
        self.recordID = recordID
        self.form = form
        self.state = state
        self.revision = revision
        self.sequence = sequence
        self.author = author
        self.review = review
        self.times = times
        self.missingAttachments = missingAttachments
        self.fieldsJSON = fieldsJSON
    }

    /// An envelope around `fields`, written in their canonical JSON form.
    public init(
        recordID: UUID, form: FormKey, state: RecordState, revision: Int64, sequence: Int64, author: String,
        review: RecordReview? = nil, times: RecordTimes = RecordTimes(), missingAttachments: [String] = [], fields: RecordFields
    ) {
        self.init(
            recordID: recordID, form: form, state: state, revision: revision, sequence: sequence, author: author,
            review: review, times: times, missingAttachments: missingAttachments, fieldsJSON: fields.jsonBytes())
    }

    /// The record's fields, decoded from ``fieldsJSON`` at each call.
    public var fields: RecordFields {
        get throws { try RecordFields(jsonBytes: fieldsJSON) }
    }

    /// The fields JSON as text, for storing.
    public var fieldsText: String { String(decoding: fieldsJSON, as: UTF8.self) }
}

// MARK: Bytes

extension RecordEnvelope {
    /// Writes the record's JSON: its id in canonical lowercase (as the contract says of pulled and fetched
    /// records), `review` only when there is one, of `times` only the known ones, `missingAttachments` only
    /// when not empty, and the fields copied as they are.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("recordId")
        writer.string(recordID.lowercased)
        writer.key("formId")
        writer.string(form.id)
        writer.key("formVersion")
        writer.int(form.version)
        writer.key("state")
        writer.string(state.rawValue)
        writer.key("revision")
        writer.int(revision)
        writer.key("sequence")
        writer.int(sequence)
        writer.key("author")
        writer.string(author)
        if let review {
            writer.key("review")
            review.write(to: &writer)
        }
        times.write(to: &writer)
        if !missingAttachments.isEmpty {
            writer.key("missingAttachments")
            writer.beginArray()
            for sha256 in missingAttachments {
                writer.element()
                writer.string(sha256)
            }
            writer.endArray()
        }
        writer.key("fields")
        writer.raw(fieldsJSON)
        writer.endObject()
    }

    /// The record's JSON bytes.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: fieldsJSON.count + 256)
        write(to: &writer)
        return writer.bytes
    }

    /// Reads a record from JSON bytes (members in any order; unknown ones skipped).
    public init(jsonBytes bytes: [UInt8]) throws {
        var reader = JSONReader(bytes)
        self = try Self.read(from: &reader)
        try reader.finish()
    }

    /// Reads a record at the reader's position; its fields are kept as the bytes read.
    public static func read(from reader: inout JSONReader) throws -> RecordEnvelope {
        var recordID: UUID?
        var formID: String?
        var formVersion: Int64?
        var state: RecordState?
        var revision: Int64?
        var sequence: Int64 = 0
        var author = ""
        var review: RecordReview?
        var fields: ArraySlice<UInt8>?
        var missingAttachments: [String] = []
        var times = RecordTimes()
        try reader.beginObject()
        while let key = try reader.nextKey() {
            if try times.read(key: key, from: &reader) { continue }
            switch key {
            case "recordId": recordID = try UUID.read(from: &reader, "recordId")
            case "formId": formID = try reader.readString()
            case "formVersion": formVersion = try reader.readInt64()
            case "state": state = try RecordState.read(from: &reader)
            case "revision": revision = try reader.readInt64()
            case "sequence": sequence = try reader.readInt64()
            case "author": author = try reader.readString()
            case "review": review = try reader.readNull() ? nil : try RecordReview.read(from: &reader)
            case "fields":
                guard reader.peek() == UInt8(ascii: "{") else { throw reader.error("fields must be an object") }
                fields = try reader.rawValue()
            case "missingAttachments":
                try reader.beginArray()
                while try reader.nextElement() { missingAttachments.append(try reader.readString()) }
            default: try reader.skipValue()
            }
        }
        guard let recordID, let formID, let formVersion, let state, let revision, let fields,
              let version = Int(exactly: formVersion)
        else { throw reader.error("A record needs recordId, formId, formVersion, state, revision and fields") }
        return RecordEnvelope(
            recordID: recordID, form: FormKey(id: formID, version: version), state: state, revision: revision, sequence: sequence,
            author: author, review: review, times: times, missingAttachments: missingAttachments, fieldsJSON: Array(fields))
    }
}

/// `GET /v1/projects/{project}/changes?after=CURSOR`: the records changed after a cursor, in commit order,
/// read whole (a device applies a page record by record with ``PullPageReader`` instead).
public struct PullPage: Sendable, Hashable {
    /// The latest state of each record that changed, ordered by `sequence`.
    public var changes: [RecordEnvelope]
    /// Pass as `after` to get the next page; store it with the applied page.
    public var cursor: Int64
    /// Whether more changes follow right away.
    public var hasMore: Bool
    /// The server's clock when it answered.
    public var serverClock: HybridTimestamp
    /// Conflict-log entries whose losing value the pulling device wrote (``LostConflict``).
    public var lostConflicts: [LostConflict]

    /// A page of `changes`.
    public init(changes: [RecordEnvelope], cursor: Int64, hasMore: Bool, serverClock: HybridTimestamp, lostConflicts: [LostConflict] = []) {
        self.changes = changes
        self.cursor = cursor
        self.hasMore = hasMore
        self.serverClock = serverClock
        self.lostConflicts = lostConflicts
    }

    /// Reads a whole page from its JSON bytes.
    public init(jsonBytes bytes: [UInt8]) throws {
        var changes: [RecordEnvelope] = []
        let end = try PullPageReader.read(bytes) { changes.append($0) }
        self.init(changes: changes, cursor: end.cursor, hasMore: end.hasMore, serverClock: end.serverClock, lostConflicts: end.lostConflicts)
    }

    /// The page's JSON bytes, as the server writes them.
    public func jsonBytes() -> [UInt8] {
        var writer = PullPageWriter()
        for record in changes { writer.append(record) }
        return writer.finish(
            cursor: cursor, hasMore: hasMore, serverClock: serverClock,
            lostConflicts: lostConflicts.map { (id: $0.id, recordID: $0.recordID.lowercased, entry: String(decoding: $0.entry.jsonBytes(), as: UTF8.self)) })
    }
}

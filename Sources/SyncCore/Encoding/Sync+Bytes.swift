import Foundation
import FormModel

/// A push request as read from its body, in one pass. (A retry is recognised by the digest of each
/// mutation's canonical form, `Mutation.jsonBytes()`: taken over the bytes sent when they are in that form,
/// as a device sends them, else over the mutation written again, since a client may re-encode it.)
public struct ReadPushRequest: Sendable {
    public var clientId: String
    public var clock: HybridTimestamp?
    public var mutations: [Mutation]
    /// Each mutation's `recordId` exactly as sent (any case), in order, for the outcomes to echo.
    public var recordIdsAsSent: [String]
    /// Where each mutation's JSON is in the body, in order (for its retry digest: ``Mutation/digestBytes(sent:range:)``).
    public var mutationRanges: [Range<Int>]

    /// Reads a push body in one pass.
    /// - Parameter maximumMutations: more than this many is refused while reading, before decoding them.
    public init(jsonBytes bytes: [UInt8], maximumMutations: Int, maximumDepth: Int = 32) throws {
        var reader = JSONReader(bytes, maximumDepth: maximumDepth)
        var clientId: String?
        var clock: HybridTimestamp?
        var mutations: [Mutation] = []
        var sentIds: [String] = []
        var ranges: [Range<Int>] = []
        var sawMutations = false
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "clientId":
                do { clientId = try reader.readString() } catch var error as JSONReadError { error.path = "clientId"; throw error }
            case "clock":
                do {
                    clock = HybridTimestamp(rawValue: try reader.readInt64())
                } catch var error as JSONReadError { error.path = "clock"; throw error }
            case "mutations":
                sawMutations = true
                try reader.beginArray()
                while try reader.nextElement() {
                    let index = mutations.count
                    guard index < maximumMutations else {
                        throw JSONReadError(offset: reader.offset, message: "A push may carry at most \(maximumMutations) mutations", path: "mutations")
                    }
                    do {
                        var sent: String?
                        _ = reader.peek()
                        let start = reader.offset
                        mutations.append(try Mutation.read(from: &reader, recordIdAsSent: &sent))
                        sentIds.append(sent ?? "")
                        ranges.append(start..<reader.offset)
                    } catch var error as JSONReadError {
                        error.path = "mutations[\(index)]" + (error.path.map { ".\($0)" } ?? "")
                        throw error
                    }
                }
            default:
                try reader.skipValue()
            }
        }
        try reader.finish()
        guard let clientId else { throw JSONReadError(offset: reader.offset, message: "A push needs clientId", path: "clientId") }
        guard sawMutations else { throw JSONReadError(offset: reader.offset, message: "A push needs mutations (an array, possibly empty)", path: "mutations") }
        self.clientId = clientId
        self.clock = clock
        self.mutations = mutations
        self.recordIdsAsSent = sentIds
        self.mutationRanges = ranges
    }
}

/// Builds a pull page from stored record bytes: the envelope of each record is written, its fields are
/// copied as stored, never decoded.
public struct PullPageWriter: Sendable {
    private var writer: JSONWriter

    public init(capacity: Int = 64 * 1024) {
        writer = JSONWriter(capacity: capacity)
        writer.beginObject()
        writer.key("changes")
        writer.beginArray()
    }

    /// Bytes written so far.
    public var byteCount: Int { writer.bytes.count }

    /// Appends one record; `fields` must be stored ``RecordFields`` JSON. `review` is written only when
    /// there is one, in the shape ``RecordSnapshot``'s `Codable` writes, and of `times` only the known ones;
    /// `missingAttachments` (the SHA-256 of each referenced attachment the server does not hold yet) only when
    /// it is not empty.
    public mutating func append(
        recordId: String, formId: String, formVersion: Int, state: String, revision: Int64, sequence: Int64,
        author: String, review: RecordReview? = nil, times: RecordTimes = RecordTimes(), missingAttachments: [String] = [],
        fields: some Sequence<UInt8>
    ) {
        writer.element()
        writer.beginObject()
        writer.key("recordId")
        writer.string(recordId)
        writer.key("formId")
        writer.string(formId)
        writer.key("formVersion")
        writer.int(formVersion)
        writer.key("state")
        writer.string(state)
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
        writer.raw(fields)
        writer.endObject()
    }

    /// Closes the page. `lostConflicts` are the conflict-log entries (stored ``ConflictEntry`` JSON, copied as
    /// it is) whose losing value the pulling device wrote, logged in the page's range of the feed.
    public consuming func finish(
        cursor: Int64, hasMore: Bool, serverClock: HybridTimestamp, lostConflicts: [(id: Int64, recordId: String, entry: String)] = []
    ) -> [UInt8] {
        writer.endArray()
        if !lostConflicts.isEmpty {
            writer.key("lostConflicts")
            writer.beginArray()
            for conflict in lostConflicts {
                writer.element()
                writer.beginObject()
                writer.key("id")
                writer.int(conflict.id)
                writer.key("recordId")
                writer.string(conflict.recordId)
                writer.key("entry")
                writer.raw(conflict.entry.utf8)
                writer.endObject()
            }
            writer.endArray()
        }
        writer.key("cursor")
        writer.int(cursor)
        writer.key("hasMore")
        writer.bool(hasMore)
        writer.key("serverClock")
        writer.int(serverClock.rawValue)
        writer.endObject()
        return writer.bytes
    }
}

/// One record of a pull page as read by a device: the envelope decoded, the fields left as bytes.
public struct PulledRecord: Sendable {
    public var recordId: UUID
    public var formId: String
    public var formVersion: Int
    public var state: RecordState
    public var revision: Int64
    public var sequence: Int64
    public var author: String
    /// The record's review (nil for records never submitted).
    public var review: RecordReview?
    /// When the record was created, last changed and submitted, where that happened.
    public var times = RecordTimes()
    /// The record's ``RecordFields`` JSON, exactly as the server stored it.
    public var fields: ArraySlice<UInt8>
    /// Hashes of attachments the record refers to that the server does not hold yet (`missingAttachments`).
    public var missingAttachments: [String] = []

    /// The fields JSON as text, for storing.
    public var fieldsText: String { String(decoding: fields, as: UTF8.self) }
}

/// What a pull page says besides its records.
public struct PullPageEnd: Sendable, Hashable {
    public var cursor: Int64
    public var hasMore: Bool
    public var serverClock: HybridTimestamp
    public var count: Int
    /// Conflict-log entries whose losing value this device wrote (``LostConflict``).
    public var lostConflicts: [LostConflict] = []
}

public enum PullPageReader {
    /// Reads a pull page record by record, handing each to `body` as it is read (no page model is built).
    public static func read(_ bytes: [UInt8], _ body: (PulledRecord) throws -> Void) throws -> PullPageEnd {
        var reader = JSONReader(bytes)
        var cursor: Int64?
        var hasMore = false
        var clock: Int64 = 0
        var count = 0
        var lost: [LostConflict] = []
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "lostConflicts":
                try reader.beginArray()
                while try reader.nextElement() {
                    do {
                        lost.append(try LostConflict.read(from: &reader))
                    } catch var error as JSONReadError {
                        error.path = "lostConflicts[\(lost.count)]" + (error.path.map { ".\($0)" } ?? "")
                        throw error
                    }
                }
            case "changes":
                try reader.beginArray()
                while try reader.nextElement() {
                    do {
                        try body(try record(&reader))
                    } catch var error as JSONReadError {
                        error.path = "changes[\(count)]" + (error.path.map { ".\($0)" } ?? "")
                        throw error
                    }
                    count += 1
                }
            case "cursor": cursor = try reader.readInt64()
            case "hasMore": hasMore = try reader.readBool()
            case "serverClock": clock = try reader.readInt64()
            default: try reader.skipValue()
            }
        }
        try reader.finish()
        guard let cursor else { throw reader.error("A pull page needs a cursor") }
        return PullPageEnd(cursor: cursor, hasMore: hasMore, serverClock: HybridTimestamp(rawValue: clock), count: count, lostConflicts: lost)
    }

    static func record(_ reader: inout JSONReader) throws -> PulledRecord {
        var recordId: UUID?
        var formId: String?
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
            case "recordId": recordId = try UUID.read(from: &reader, "recordId")
            case "formId": formId = try reader.readString()
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
        guard let recordId, let formId, let formVersion, let state, let revision, let fields,
              let version = Int(exactly: formVersion)
        else { throw reader.error("A pulled record needs recordId, formId, formVersion, state, revision and fields") }
        return PulledRecord(recordId: recordId, formId: formId, formVersion: version, state: state, revision: revision, sequence: sequence, author: author, review: review, times: times, fields: fields, missingAttachments: missingAttachments)
    }
}

import Foundation
import FormModel

/// One entry of the conflict log: both sides of a field that two writers changed, and who won.
///
/// Every losing value is logged, whichever policy decided; `manual` leaves the entry open for a person.
///
/// Its one codec is the byte codec: ``read(from:)`` / ``init(jsonBytes:)`` and ``write(to:)`` / ``jsonBytes()``,
/// held to the `ConflictEntry` schema of `Schema/openapi.yaml` by the wire contract tests. (``Kind`` and
/// ``Winner`` stay `Codable`: the review API's conflict views carry them.)
public struct ConflictEntry: Sendable, Hashable {
    public enum Kind: String, Codable, Sendable {
        /// Both sides changed the field since their common base.
        case field
        /// A record deleted on the server was edited on a device and has been restored; with a `fieldId` of the
        /// form `defects/<id>/@removed`, the same for one repeat instance.
        case restoredAfterDelete
    }

    public enum Winner: String, Codable, Sendable {
        case server
        case client
    }

    public var kind: Kind
    /// The field, for `field` entries.
    public var fieldID: String?
    public var policy: ConflictPolicy
    public var winner: Winner
    /// Whether a person still has to decide (`manual` policy).
    public var open: Bool
    /// The server's side before the merge.
    public var server: FieldState?
    /// The device's side.
    public var client: FieldState?

    public init(kind: Kind = .field, fieldID: String?, policy: ConflictPolicy, winner: Winner, open: Bool = false, server: FieldState?, client: FieldState?) {
        self.kind = kind
        self.fieldID = fieldID
        self.policy = policy
        self.winner = winner
        self.open = open
        self.server = server
        self.client = client
    }

    /// The value that did not end up in the record.
    public var losingValue: AnswerValue? {
        winner == .server ? client?.value : server?.value
    }
}

/// A conflict-log entry sent to the device whose value lost when another device's push replaced it: that
/// device was not told by a push outcome, so its next pull page carries the entry (`lostConflicts`), once for
/// the range of the feed the change that logged it falls in. `id` is the server's log id: a page applied
/// again stores it once.
///
/// Its one codec is the byte codec (``read(from:)`` / ``init(jsonBytes:)``, ``write(to:)`` / ``jsonBytes()``); the
/// server writes the same members from the stored entry's bytes (``PullPageWriter``).
public struct LostConflict: Sendable, Hashable {
    public var id: Int64
    public var recordID: UUID
    public var entry: ConflictEntry

    public init(id: Int64, recordID: UUID, entry: ConflictEntry) {
        self.id = id
        self.recordID = recordID
        self.entry = entry
    }

    /// Reads a lost conflict at the reader's position (members in any order; unknown ones skipped).
    public static func read(from reader: inout JSONReader) throws -> LostConflict {
        var id: Int64?
        var recordID: UUID?
        var entry: ConflictEntry?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "id": id = try reader.readInt64()
            case "recordId": recordID = try UUID.read(from: &reader, "recordId")
            case "entry": entry = try ConflictEntry.read(from: &reader)
            default: try reader.skipValue()
            }
        }
        guard let id, let recordID, let entry else { throw reader.error("A lost conflict needs id, recordId and entry") }
        return LostConflict(id: id, recordID: recordID, entry: entry)
    }

    /// Reads a lost conflict from its JSON bytes, the whole of them.
    public init(jsonBytes bytes: [UInt8]) throws {
        self = try JSONReader.whole(bytes, Self.read(from:))
    }

    /// Writes the lost conflict as a pull page carries it: `id`, `recordId` (lower case), `entry`.
    public func write(to writer: inout JSONWriter) {
        Self.write(id: id, recordID: recordID.lowercased, entryJSON: entry.jsonBytes(), to: &writer)
    }

    /// The lost conflict's JSON bytes.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 320)
        write(to: &writer)
        return writer.bytes
    }

    /// The one layout of a lost conflict, for a value and for the server's stored entry bytes alike.
    static func write(id: Int64, recordID: String, entryJSON: some Sequence<UInt8>, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("id")
        writer.int(id)
        writer.key("recordId")
        writer.string(recordID)
        writer.key("entry")
        writer.raw(entryJSON)
        writer.endObject()
    }
}

import Foundation
import FormModel

/// One entry of the conflict log: both sides of a field that two writers changed, and who won.
///
/// Every losing value is logged, whichever policy decided; `manual` leaves the entry open for a person.
///
/// FieldSheet reads and writes it with the byte codec only (`read(from:)`, `write(to:)`). Its `Codable`
/// conformance is kept only because ``MutationOutcome``'s and ``LostConflict``'s are; both codecs are held
/// to the `ConflictEntry` schema of `Schema/openapi.yaml`.
public struct ConflictEntry: Codable, Sendable, Hashable {
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

    private enum CodingKeys: String, CodingKey {
        case kind, fieldID = "fieldId", policy, winner, open, server, client
    }

    public init(kind: Kind = .field, fieldID: String?, policy: ConflictPolicy, winner: Winner, open: Bool = false, server: FieldState?, client: FieldState?) {
        self.kind = kind
        self.fieldID = fieldID
        self.policy = policy
        self.winner = winner
        self.open = open
        self.server = server
        self.client = client
    }

    /// Reads an entry as the byte reader does: `kind` absent is a `field` entry, `open` absent is false
    /// (servers before either existed wrote neither).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decodeIfPresent(Kind.self, forKey: .kind) ?? .field
        fieldID = try container.decodeIfPresent(String.self, forKey: .fieldID)
        policy = try container.decode(ConflictPolicy.self, forKey: .policy)
        winner = try container.decode(Winner.self, forKey: .winner)
        open = try container.decodeIfPresent(Bool.self, forKey: .open) ?? false
        server = try container.decodeIfPresent(FieldState.self, forKey: .server)
        client = try container.decodeIfPresent(FieldState.self, forKey: .client)
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
public struct LostConflict: Codable, Sendable, Hashable {
    public var id: Int64
    public var recordID: UUID
    public var entry: ConflictEntry

    private enum CodingKeys: String, CodingKey {
        case id, recordID = "recordId", entry
    }

    public init(id: Int64, recordID: UUID, entry: ConflictEntry) {
        self.id = id
        self.recordID = recordID
        self.entry = entry
    }

    static func read(from reader: inout JSONReader) throws -> LostConflict {
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
}

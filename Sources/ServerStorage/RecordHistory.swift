import Foundation
import FormModel
import SyncCore

/// One applied change of a record, kept as its audit trail: who made it, when, from which device, and
/// what it changed (fields from what to what, the state, the review with its comment).
public struct HistoryEntry: Sendable, Hashable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// A push from a device changed the record's fields or state.
        case change
        /// A reviewer or admin set the review state.
        case review
        /// A reviewer or admin resolved a conflict of the record.
        case resolution
    }

    public var recordID: UUID
    /// The record's revision after the change (a resolution that kept the server's value made none, and
    /// names the revision it left).
    public var revision: Int64
    public var kind: Kind
    public var userID: Int64
    /// Filled in when read; not stored.
    public var userName: String
    /// The device the change came from; nil for changes made on the server (reviews, resolutions).
    public var clientID: String?
    public var at: Date
    public var detail: HistoryDetail
    /// The pushed mutation that made the change (not stored: it lets the push attach the mutation's signature).
    public var mutationID: String?
    /// The device row whose token pushed the change; nil for changes made on the server.
    public var deviceID: Int64?
    /// The device's signature of the mutation that made the change, with the bytes it signed; nil when the
    /// push was not signed (docs/signed-submissions.md).
    public var signed: SignedMutation?

    public init(
        recordID: UUID, revision: Int64, kind: Kind, userID: Int64, userName: String = "", clientID: String?, at: Date, detail: HistoryDetail,
        mutationID: String? = nil
    ) {
        self.recordID = recordID
        self.revision = revision
        self.kind = kind
        self.userID = userID
        self.userName = userName
        self.clientID = clientID
        self.at = at
        self.detail = detail
        self.mutationID = mutationID
    }

    /// Whether this entry made its record: a change at revision 1 (a record's first revision, `RecordMerge`'s
    /// for a record not stored yet). Such an entry is its record's first, so its link in the hash chain follows
    /// ``HistoryChain/genesis`` and a writer need not read a latest hash for it. Records are never removed, and
    /// only a push writes changes (reviews and resolutions name a stored record's revision).
    public var startsRecord: Bool { kind == .change && revision == 1 }
}

/// A mutation as its device signed it, kept with the history entry the mutation made: the mutation's canonical
/// bytes (`Mutation.jsonBytes()`) and what signed them — the push's one signature, over its manifest, with the
/// mutation's place in it (``manifest``), or, from devices that sign each mutation, the mutation's own signature.
public struct SignedMutation: Sendable, Hashable {
    /// Base64 of the 64-byte Ed25519 signature of ``mutation`` alone; nil when the push signed it (``manifest``).
    public var signature: String?
    /// The mutation's canonical JSON, exactly the bytes signed (or whose digest the manifest lists).
    public var mutation: String
    /// The signed manifest of the push that carried the mutation, and the mutation's index in it.
    public var manifest: PushManifestReference?

    public init(signature: String?, mutation: String, manifest: PushManifestReference? = nil) {
        self.signature = signature
        self.mutation = mutation
        self.manifest = manifest
    }
}

/// What one history entry changed. Stored as JSON; written by the byte-level writer on the push path,
/// read back with `Codable` (the same shape).
public struct HistoryDetail: Codable, Sendable, Hashable {
    public struct FieldDiff: Codable, Sendable, Hashable {
        /// The answer before (nil: unanswered).
        public var from: AnswerValue?
        /// The answer after (nil: cleared).
        public var to: AnswerValue?

        public init(from: AnswerValue?, to: AnswerValue?) {
            self.from = from
            self.to = to
        }
    }

    public struct StateDiff: Codable, Sendable, Hashable {
        /// nil for a record the change created.
        public var from: RecordState?
        public var to: RecordState

        public init(from: RecordState?, to: RecordState) {
            self.from = from
            self.to = to
        }
    }

    public struct ReviewDiff: Codable, Sendable, Hashable {
        public var from: ReviewState?
        public var to: ReviewState
        public var comment: String?

        public init(from: ReviewState?, to: ReviewState, comment: String? = nil) {
            self.from = from
            self.to = to
            self.comment = comment
        }
    }

    public struct Resolution: Codable, Sendable, Hashable {
        public var conflictID: Int64
        public var fieldID: String?
        /// `server` or `client`: whose value the record keeps.
        public var kept: ConflictEntry.Winner

        private enum CodingKeys: String, CodingKey {
            case conflictID = "conflictId", fieldID = "fieldId", kept
        }

        public init(conflictID: Int64, fieldID: String?, kept: ConflictEntry.Winner) {
            self.conflictID = conflictID
            self.fieldID = fieldID
            self.kept = kept
        }
    }

    /// One field whose answer the change changed, as the detail keeps them (``changes``).
    public struct FieldChange: Sendable, Hashable {
        public var fieldID: String
        public var diff: FieldDiff

        public init(fieldID: String, diff: FieldDiff) {
            self.fieldID = fieldID
            self.diff = diff
        }
    }

    /// The version of the record's form the change was made against (a device's change: its mutation's form
    /// version, which may be older than the record's newest); nil for reviews and resolutions, and for changes
    /// stored before the version was kept.
    public var version: Int?
    public var state: StateDiff?
    /// The fields whose answer changed, each once, in ascending id order: the order they are stored in. The push
    /// planner makes them in that order, so a push builds no dictionary of them.
    public private(set) var changes: [FieldChange]
    public var review: ReviewDiff?
    public var resolution: Resolution?

    /// The fields whose answer changed, by id (``changes`` as a dictionary, made at each call; setting it sorts).
    public var fields: [String: FieldDiff] {
        get { Dictionary(changes.lazy.map { ($0.fieldID, $0.diff) }, uniquingKeysWith: { _, last in last }) }
        set { changes = Self.ordered(newValue) }
    }

    public init(
        version: Int? = nil, state: StateDiff? = nil, fields: [String: FieldDiff] = [:], review: ReviewDiff? = nil, resolution: Resolution? = nil
    ) {
        self.version = version
        self.state = state
        self.changes = Self.ordered(fields)
        self.review = review
        self.resolution = resolution
    }

    /// A detail whose field changes are `changes`: kept as given when their ids ascend, each once (the push
    /// planner makes them so; one comparison a change checks it), else sorted with an id's changes made one — from its first change's `from` to its last change's
    /// `to` — so the stored JSON never holds a field twice or out of order, and says where the answer started.
    package init(version: Int?, state: StateDiff?, changes: [FieldChange], review: ReviewDiff?) {
        self.version = version
        self.state = state
        if zip(changes, changes.dropFirst()).allSatisfy({ $0.fieldID < $1.fieldID }) {
            self.changes = changes
        } else {
            self.changes = Self.ordered(Dictionary(changes.lazy.map { ($0.fieldID, $0.diff) }, uniquingKeysWith: { first, last in FieldDiff(from: first.from, to: last.to) }))
        }
        self.review = review
        self.resolution = nil
    }

    private static func ordered(_ fields: [String: FieldDiff]) -> [FieldChange] {
        fields.sorted { $0.key < $1.key }.map { FieldChange(fieldID: $0.key, diff: $0.value) }
    }

    private enum CodingKeys: String, CodingKey {
        case version, state, fields, review, resolution
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decodeIfPresent(Int.self, forKey: .version)
        state = try container.decodeIfPresent(StateDiff.self, forKey: .state)
        changes = Self.ordered(try container.decode([String: FieldDiff].self, forKey: .fields))
        review = try container.decodeIfPresent(ReviewDiff.self, forKey: .review)
        resolution = try container.decodeIfPresent(Resolution.self, forKey: .resolution)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(version, forKey: .version)
        try container.encodeIfPresent(state, forKey: .state)
        try container.encode(fields, forKey: .fields)
        try container.encodeIfPresent(review, forKey: .review)
        try container.encodeIfPresent(resolution, forKey: .resolution)
    }

    /// The stored JSON, keys in a fixed order, fields sorted by id.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 64 + changes.count * 48)
        writer.beginObject()
        if let version {
            writer.key("version")
            writer.int(Int64(version))
        }
        if let state {
            writer.key("state")
            writer.beginObject()
            if let from = state.from {
                writer.key("from")
                writer.string(from.rawValue)
            }
            writer.key("to")
            writer.string(state.to.rawValue)
            writer.endObject()
        }
        writer.key("fields")
        writer.beginObject()
        for change in changes {
            writer.key(change.fieldID)
            writer.beginObject()
            writer.key("from")
            change.diff.from.write(to: &writer)
            writer.key("to")
            change.diff.to.write(to: &writer)
            writer.endObject()
        }
        writer.endObject()
        if let review {
            writer.key("review")
            writer.beginObject()
            if let from = review.from {
                writer.key("from")
                writer.string(from.rawValue)
            }
            writer.key("to")
            writer.string(review.to.rawValue)
            if let comment = review.comment {
                writer.key("comment")
                writer.string(comment)
            }
            writer.endObject()
        }
        if let resolution {
            writer.key("resolution")
            writer.beginObject()
            writer.key("conflictId")
            writer.int(resolution.conflictID)
            if let fieldID = resolution.fieldID {
                writer.key("fieldId")
                writer.string(fieldID)
            }
            writer.key("kept")
            writer.string(resolution.kept.rawValue)
            writer.endObject()
        }
        writer.endObject()
        return writer.bytes
    }

    /// Reads what ``jsonBytes()`` wrote.
    public init(jsonText: String) throws {
        self = try JSONDecoder().decode(HistoryDetail.self, from: Data(jsonText.utf8))
    }
}

/// One entry of a project's conflict log as reviewers see it: both values, who wrote each, and whether
/// (and how) it was resolved.
public struct ConflictLogEntry: Sendable, Hashable {
    /// The query both backends read entries with (the same SQL on SQLite and PostgreSQL), in the column
    /// order their row readers expect; each appends its own `WHERE`, order and limit.
    package static let selectSQL = """
        SELECT c.id, c.record_id, coalesce(r.form_id, ''), c.mutation_id, c.client_id, c.entry, c.open, c.created_at,
               cu.name, c.resolution, c.resolved_at, ru.name
        FROM conflicts c
        LEFT JOIN records r ON r.project_id = c.project_id AND r.id = c.record_id
        LEFT JOIN mutations m ON m.project_id = c.project_id AND m.client_id = c.client_id AND m.mutation_id = c.mutation_id
        LEFT JOIN users cu ON cu.id = m.user_id
        LEFT JOIN users ru ON ru.id = c.resolved_by
        """

    public var id: Int64
    public var recordID: UUID
    public var formID: String
    public var mutationID: String
    /// The device whose change met the server's value.
    public var clientID: String
    public var entry: ConflictEntry
    /// The user who pushed the device's side; nil when unknown.
    public var clientAuthor: String?
    /// The user who wrote the server's side (from the record's history); nil when unknown.
    public var serverAuthor: String?
    public var open: Bool
    public var createdAt: Date
    public var resolution: ConflictResolution?

    public init(
        id: Int64, recordID: UUID, formID: String, mutationID: String, clientID: String, entry: ConflictEntry,
        clientAuthor: String?, serverAuthor: String?, open: Bool, createdAt: Date, resolution: ConflictResolution?
    ) {
        self.id = id
        self.recordID = recordID
        self.formID = formID
        self.mutationID = mutationID
        self.clientID = clientID
        self.entry = entry
        self.clientAuthor = clientAuthor
        self.serverAuthor = serverAuthor
        self.open = open
        self.createdAt = createdAt
        self.resolution = resolution
    }
}

/// How an open conflict was closed.
public struct ConflictResolution: Sendable, Hashable {
    public var kept: ConflictEntry.Winner
    public var by: String
    public var at: Date

    public init(kept: ConflictEntry.Winner, by: String, at: Date) {
        self.kept = kept
        self.by = by
        self.at = at
    }
}

import Foundation
import FormModel
import SyncCore

/// A project: the unit of membership, forms and records.
public struct ProjectInfo: Sendable, Hashable, Codable {
    public var id: Int64
    public var name: String

    public init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }
}

/// One published version of a form.
public struct PublishedForm: Sendable, Hashable {
    public var projectID: Int64
    public var definition: FormDefinition
    /// SHA-256 (hex) of the definition with its version set to 0: equal digests mean an unchanged form.
    public var digest: String
    public var publishedAt: Date

    public var formID: String { definition.id }
    public var version: Int { definition.version }

    public init(projectID: Int64, definition: FormDefinition, digest: String, publishedAt: Date) {
        self.projectID = projectID
        self.definition = definition
        self.digest = digest
        self.publishedAt = publishedAt
    }
}

/// A record as stored: one row per record, every field with its metadata together.
public struct StoredRecord: Sendable, Hashable {
    public var id: UUID
    /// The form and the version of it the record is on.
    public var form: FormKey
    public var state: RecordState
    public var authorID: Int64
    public var authorName: String
    /// Whether the record was ever submitted: shared records are visible to reviewers, also as tombstones.
    public var shared: Bool
    public var revision: Int64
    /// Assigned by the storage when the change commits; 0 for a record not yet written.
    public var sequence: Int64
    /// The review state and latest comment; nil until the record is first submitted.
    public var review: RecordReview?
    /// When the record was created, last changed and last submitted where that happened: on the device that
    /// made the change (as its mutation said), or on the server for a change made here (nil before written).
    public var times: RecordTimes
    /// When the server stored the record's latest change: its arrival, on the server's clock (nil before written).
    public var receivedAt: Date?
    /// The device (client id) the record came from first; nil for records stored before devices were kept.
    public var device: String?
    public var fields: RecordFields

    public init(
        id: UUID, form: FormKey, state: RecordState, authorID: Int64, authorName: String,
        shared: Bool, revision: Int64, sequence: Int64, review: RecordReview? = nil, times: RecordTimes = RecordTimes(),
        receivedAt: Date? = nil, device: String? = nil, fields: RecordFields
    ) {
        self.id = id
        self.form = form
        self.state = state
        self.authorID = authorID
        self.authorName = authorName
        self.shared = shared
        self.revision = revision
        self.sequence = sequence
        self.review = review
        self.times = times
        self.receivedAt = receivedAt
        self.device = device
        self.fields = fields
    }

    /// The record as sent to devices (`GET …/records/{id}`), its fields in their canonical JSON form.
    public var envelope: RecordEnvelope {
        RecordEnvelope(
            recordID: id, form: form, state: state, revision: revision, sequence: sequence,
            author: authorName, review: review, times: times, fields: fields)
    }
}

/// A slice of the change feed, bounded in count and in bytes: each record's envelope with its fields as the
/// stored ``RecordFields`` JSON, never decoded on the way to a pull page.
public struct FeedPage: Sendable, Hashable {
    public var records: [RecordEnvelope]
    /// Whether more changes follow right away.
    public var hasMore: Bool

    public init(records: [RecordEnvelope], hasMore: Bool) {
        self.records = records
        self.hasMore = hasMore
    }
}

/// Which records a reader may see in the change feed.
public enum RecordVisibility: Sendable, Hashable {
    /// Only the records the user created (collectors).
    case authoredBy(Int64)
    /// The user's own records and every shared (once submitted) record (reviewers, admins).
    case authoredByOrShared(Int64)
}

/// The stored outcome of one mutation, kept so a retry gets the same answer.
public struct StoredOutcome: Sendable, Hashable {
    public var mutationID: String
    public var userID: Int64
    /// SHA-256 of the mutation as first sent; a different payload under the same id is refused.
    public var digest: Data
    public var outcome: MutationOutcome

    public init(mutationID: String, userID: Int64, digest: Data, outcome: MutationOutcome) {
        self.mutationID = mutationID
        self.userID = userID
        self.digest = digest
        self.outcome = outcome
    }
}

/// What the storage reads inside the push transaction and hands to the push planner.
public struct PushSnapshot: Sendable, Hashable {
    /// Outcomes already stored for mutation ids of this batch (same project and client).
    public var storedOutcomes: [String: StoredOutcome]
    /// The project's current records named by the batch.
    public var records: [UUID: StoredRecord]
    /// The project's current entities the batch may change (``entityIDs(named:records:)``), deleted ones too.
    public var entities: [UUID: StoredEntity]
    /// The ids of the project's forms closed to new records (``FormStateStorage``), read in the push's
    /// transaction so a form closed before the push commits refuses its new records.
    public var closedForms: Set<String>

    public init(storedOutcomes: [String: StoredOutcome], records: [UUID: StoredRecord], entities: [UUID: StoredEntity] = [:], closedForms: Set<String> = []) {
        self.storedOutcomes = storedOutcomes
        self.records = records
        self.entities = entities
        self.closedForms = closedForms
    }

    /// What a push is decided on, without the records' and entities' content: the stored outcomes (user and
    /// digest), each record's and entity's revision, and the closed forms. Every change to a stored record or
    /// entity moves its revision (a review, a resolution, an assignment too), so two snapshots with the same
    /// revisions decide a push alike.
    public struct Revisions: Sendable, Hashable {
        public struct Outcome: Sendable, Hashable {
            public var userID: Int64
            public var digest: Data

            public init(userID: Int64, digest: Data) {
                self.userID = userID
                self.digest = digest
            }
        }

        public var outcomes: [String: Outcome]
        public var records: [UUID: Int64]
        public var entities: [UUID: Int64]
        public var closedForms: Set<String>

        public init(outcomes: [String: Outcome], records: [UUID: Int64], entities: [UUID: Int64], closedForms: Set<String>) {
            self.outcomes = outcomes
            self.records = records
            self.entities = entities
            self.closedForms = closedForms
        }
    }

    /// This snapshot's ``Revisions``.
    public var revisions: Revisions {
        Revisions(
            outcomes: storedOutcomes.mapValues { Revisions.Outcome(userID: $0.userID, digest: $0.digest) },
            records: records.mapValues(\.revision), entities: entities.mapValues(\.revision), closedForms: closedForms)
    }

    /// Whether `other` decides a push like this one: the same ``revisions`` (the fields are not compared).
    public func decidesLike(_ other: PushSnapshot) -> Bool {
        revisions == other.revisions
    }
}

/// A push's snapshot moved between planning and writing: the plan was not written; `snapshot` is what the
/// push's transaction read, to decide it again on.
public struct PushSnapshotMoved: Error, Sendable {
    public var snapshot: PushSnapshot

    public init(snapshot: PushSnapshot) {
        self.snapshot = snapshot
    }
}

/// A conflict log entry with where it came from.
public struct LoggedConflict: Sendable, Hashable {
    public var recordID: UUID
    public var mutationID: String
    public var clientID: String
    public var entry: ConflictEntry

    public init(recordID: UUID, mutationID: String, clientID: String, entry: ConflictEntry) {
        self.recordID = recordID
        self.mutationID = mutationID
        self.clientID = clientID
        self.entry = entry
    }

    /// The device whose value lost when that is not the pushing device (which learns it from the push's
    /// outcome): the writer of the server's side when the pushed value won. It gets the entry at its next pull.
    public var otherLoser: String? {
        guard entry.winner == .client, let writer = entry.server?.clientID, writer != clientID else { return nil }
        return writer
    }
}

/// A conflict-log entry on its way to a device whose value lost: the log's id, the record, and the entry as
/// stored (``ConflictEntry`` JSON, copied into the pull page as it is).
public struct LostConflictRow: Sendable, Hashable {
    public var id: Int64
    /// The record id as stored (lowercase).
    public var recordID: String
    public var entry: String

    public init(id: Int64, recordID: String, entry: String) {
        self.id = id
        self.recordID = recordID
        self.entry = entry
    }
}

/// What the push planner decided: the storage writes all of it in the same transaction, or nothing.
public struct PushPlan: Sendable {
    /// One outcome per mutation of the batch, in order (returned to the device).
    public var outcomes: [MutationOutcome]
    /// Outcomes not stored before (first attempts).
    public var newOutcomes: [StoredOutcome]
    /// Records to insert or replace, each once, in the order their changes were made.
    public var records: [StoredRecord]
    public var conflicts: [LoggedConflict]
    /// One history entry per applied change, in the order the changes were made.
    public var history: [HistoryEntry]
    /// Open conflicts (by id) this plan resolves; the write fails with ``StorageError/Code/alreadyResolved``
    /// when one of them is no longer open.
    public var resolvedConflicts: [Int64]
    /// Number of mutations that changed a record.
    public var appliedCount: Int
    /// Entities to insert or replace, each once, in the order their changes were made: the entity changes
    /// of the records this plan writes (docs/entity-lists.md). Each takes the next number of its list's sequence.
    public var entities: [StoredEntity] = []
    /// One entry per applied entity change, in order.
    public var entityHistory: [EntityHistoryEntry] = []
    /// The losing values of entity properties.
    public var entityConflicts: [LoggedEntityConflict] = []
    /// Set by the storage: how many webhook deliveries the push wrote to the outbox with its changes.
    public var webhookDeliveries = 0
    /// Set by the storage: the deliveries the push claimed for this process's delivery service, handed to it
    /// once the commit is durable (``WebhookSignal/hand(_:)``).
    public var webhookClaims: [ClaimedWebhookDelivery] = []
    /// The JSON columns, when the planner encoded them (``encode()``): outside any write lock.
    private var encoded: Encoded?

    public init(outcomes: [MutationOutcome] = [], newOutcomes: [StoredOutcome] = [], records: [StoredRecord] = [], conflicts: [LoggedConflict] = [], history: [HistoryEntry] = [], resolvedConflicts: [Int64] = [], appliedCount: Int = 0) {
        self.outcomes = outcomes
        self.newOutcomes = newOutcomes
        self.records = records
        self.conflicts = conflicts
        self.history = history
        self.resolvedConflicts = resolvedConflicts
        self.appliedCount = appliedCount
    }

    /// What a storage writes as JSON text: each record's fields, each history entry's detail, each new
    /// outcome and each conflict entry, in the order of ``records``, ``history``, ``newOutcomes`` and
    /// ``conflicts``.
    public struct Encoded: Sendable {
        public var fields: [String]
        public var history: [String]
        public var outcomes: [String]
        public var conflicts: [String]
    }

    /// Encodes the JSON columns now, so the storage's transaction (which holds the single writer) only
    /// binds them; `fields` and `history`, when given, are the records' fields and the history entries'
    /// details already encoded (one per record and per entry, in order).
    /// Encoding again after a change to the plan is needed: ``encoding()`` checks the counts only.
    public mutating func encode(fields: [String]? = nil, history: [String]? = nil) {
        encoded = makeEncoding(fields: fields, history: history)
    }

    /// The JSON columns: those ``encode()`` made, or made now.
    public func encoding() -> Encoded {
        if let encoded, encoded.fields.count == records.count, encoded.history.count == history.count,
           encoded.outcomes.count == newOutcomes.count, encoded.conflicts.count == conflicts.count {
            return encoded
        }
        return makeEncoding()
    }

    private func makeEncoding(fields: [String]? = nil, history encodedHistory: [String]? = nil) -> Encoded {
        Encoded(
            fields: fields.flatMap { $0.count == records.count ? $0 : nil }
                ?? records.map { String(decoding: $0.fields.jsonBytes(), as: UTF8.self) },
            history: encodedHistory.flatMap { $0.count == history.count ? $0 : nil }
                ?? history.map { String(decoding: $0.detail.jsonBytes(), as: UTF8.self) },
            outcomes: newOutcomes.map { String(decoding: $0.outcome.jsonBytes(), as: UTF8.self) },
            conflicts: conflicts.map { String(decoding: $0.entry.jsonBytes(), as: UTF8.self) })
    }
}

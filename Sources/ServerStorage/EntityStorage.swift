import Foundation
import FormModel
import SyncCore

/// Entity lists as the server keeps them (docs/entity-lists.md, "Sync: how entities are stored, applied and
/// sent"): lists with declared properties and a scope, entities whose label and properties are a
/// `RecordFields`, their history and conflict log, and the user properties a `property:NAME` scope reads.
///
/// Entities change in three ways: a pushed record's entity change, applied in the push's own transaction
/// (``PushPlan/entities``); an import or an assignment by an admin; a deletion. Every change takes the next
/// number of its list's own sequence (`entity_lists.last_sequence`, taken inside the writing transaction
/// as the project's record sequence is), so a list's feed pages by sequence and never skips a change.
public protocol EntityStorage: Sendable {
    /// The project's entity lists by name.
    func entityLists(projectID: Int64) async throws -> [EntityListInfo]
    func entityList(projectID: Int64, name: String) async throws -> EntityListInfo?
    /// Creates the list when new, and adds the properties it does not declare yet. Throws
    /// ``StorageError/Code/entityPropertyKind`` (nothing written) when a property is declared with another kind.
    @discardableResult
    func declareEntityList(projectID: Int64, name: String, properties: [EntityProperty]) async throws -> EntityListInfo
    /// Sets the list's scope. Every entity of the list is sent again (its sequence moves), so each device
    /// receives what the new scope gives it and removes what it takes away.
    func setEntityScope(projectID: Int64, list: String, scope: EntityScope) async throws
    /// The list's entities changed after `after`, ordered by sequence: at most `limit`, and no more once their
    /// fields add up to `maxBytes` (a page holds at least one). In scope or not: the caller decides.
    func entityChanges(projectID: Int64, list: String, after: Int64, limit: Int, maxBytes: Int) async throws -> EntityFeedPage
    /// One entity of the project (deleted ones too).
    func entity(projectID: Int64, id: UUID) async throws -> StoredEntity?
    /// A page of one list's entities ordered by id, after `after` (for exports that stream); deleted ones too.
    func entities(projectID: Int64, list: String, after: UUID?, limit: Int) async throws -> [StoredEntity]
    /// Every history entry of the entity, oldest first, with its user's name and the review state of the
    /// record that made it (what the console shows of a rejected record's change).
    func entityHistory(projectID: Int64, entityID: UUID) async throws -> [EntityHistoryEntry]
    /// The entity's conflict log, oldest first.
    func entityConflicts(projectID: Int64, entityID: UUID) async throws -> [LoggedEntityConflict]
    /// Writes imported or edited entities in one transaction: each is created or replaced as given (the
    /// caller merged it), takes the next number of its list's sequence, and gets its history entry.
    /// Entities of another list under the same id are refused (``StorageError/Code/entityConflict``).
    func writeEntities(projectID: Int64, list: String, _ entities: [StoredEntity], history: [EntityHistoryEntry]) async throws
    /// Assigns the entities to `userName` (nil: unassigns); returns how many exist in the list. Each moves
    /// in the list's feed, so it leaves the previous assignee's device and reaches the new one's.
    func assignEntities(projectID: Int64, list: String, ids: [UUID], userName: String?, by userID: Int64) async throws -> Int
    /// A project admin's edit of the entity's label and properties (``EntityEdit``), merged and written in one
    /// transaction with its history entry; the entity moves in its list's feed, so devices in scope receive it at
    /// their next sync. Nothing is written when a property it sets changed since `edit.baseRevision`.
    func editEntity(projectID: Int64, list: String, id: UUID, edit: EntityEdit, by userID: Int64) async throws -> EntityEdit.Outcome
    /// Marks the entity deleted (a tombstone that the feed sends as removed); false when there is none.
    func deleteEntity(projectID: Int64, list: String, id: UUID, by userID: Int64) async throws -> Bool
    /// The project's members' user ids by name.
    func memberIDs(projectID: Int64) async throws -> [String: Int64]
    /// The user's properties in the project (name → value).
    func userProperties(projectID: Int64, userID: Int64) async throws -> [String: String]
    /// Sets (or, with nil, removes) a property of a member. The entities of lists scoped by that property
    /// whose value is the old or the new one move in their feeds, so the member's devices receive and remove
    /// what the change gives and takes. Throws ``StorageError/Code/unknownUser`` for a user who is not a member.
    func setUserProperty(projectID: Int64, userName: String, name: String, value: String?) async throws
    /// A page of a list's entities for the console, ordered by label then id: at the query's keyset position
    /// (first, after or before a row, last), whose label contains `search` (case-insensitive), whose property
    /// `filter.name` is `filter.value` and that are assigned to `assignee`. Rows come in the table's order
    /// whichever way the page was read.
    func entityTable(projectID: Int64, list: String, query: EntityTableQuery) async throws -> [EntityTableRow]
}

/// A property an entity list declares: its name and the kind of the fields that save to it.
public struct EntityProperty: Sendable, Hashable, Codable {
    public var name: String
    public var kind: FieldKind

    public init(name: String, kind: FieldKind) {
        self.name = name
        self.kind = kind
    }
}

/// An entity list of a project.
public struct EntityListInfo: Sendable, Hashable {
    public var name: String
    /// The declared properties, by name.
    public var properties: [EntityProperty]
    public var scope: EntityScope
    /// The sequence number of the list's latest change (0: none yet).
    public var lastSequence: Int64

    public init(name: String, properties: [EntityProperty], scope: EntityScope = .all, lastSequence: Int64 = 0) {
        self.name = name
        self.properties = properties
        self.scope = scope
        self.lastSequence = lastSequence
    }

    /// The properties as stored (a JSON array of `{"kind","name"}`, by name).
    public static func propertiesJSON(_ properties: [EntityProperty]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = (try? encoder.encode(properties.sorted { $0.name < $1.name })) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    public static func properties(json: String) throws -> [EntityProperty] {
        try JSONDecoder().decode([EntityProperty].self, from: Data(json.utf8))
    }

    /// The properties after declaring `added`: those not declared yet join (by name); the refusal, naming
    /// each, when one is declared with another kind.
    public static func merging(_ declared: [EntityProperty], _ added: [EntityProperty], list: String) throws -> [EntityProperty] {
        var byName = Dictionary(declared.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var changed: [String] = []
        for property in added {
            if let existing = byName[property.name] {
                if existing.kind != property.kind {
                    changed.append("The entity list \"\(list)\" declares the property \"\(property.name)\" as \(existing.kind.rawValue); it cannot become \(property.kind.rawValue).")
                }
            } else {
                byName[property.name] = property
            }
        }
        guard changed.isEmpty else {
            throw StorageError(.entityPropertyKind, changed.joined(separator: " ") + " A property keeps its kind: save the answer to a new property instead.")
        }
        return byName.values.sorted { $0.name < $1.name }
    }
}

/// One entity as stored.
public struct StoredEntity: Sendable, Hashable {
    public var list: String
    public var id: UUID
    public var revision: Int64
    /// Assigned by the storage when the change commits; 0 for an entity not yet written.
    public var sequence: Int64
    public var creatorID: Int64
    /// Filled in when read.
    public var creatorName: String
    public var assigneeID: Int64?
    /// Filled in when read.
    public var assigneeName: String?
    /// A tombstone: the feed sends the entity as removed.
    public var deleted: Bool
    /// The label under `label`, each property under its name.
    public var fields: RecordFields
    public var createdAt: Date?
    public var updatedAt: Date?

    public init(
        list: String, id: UUID, revision: Int64, sequence: Int64 = 0, creatorID: Int64, creatorName: String = "", assigneeID: Int64? = nil,
        assigneeName: String? = nil, deleted: Bool = false, fields: RecordFields, createdAt: Date? = nil, updatedAt: Date? = nil
    ) {
        self.list = list
        self.id = id
        self.revision = revision
        self.sequence = sequence
        self.creatorID = creatorID
        self.creatorName = creatorName
        self.assigneeID = assigneeID
        self.assigneeName = assigneeName
        self.deleted = deleted
        self.fields = fields
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The key of the label in ``fields``.
    public static let labelKey = "label"

    /// The label: the `label` field's text, else the id (an entity created without one).
    public var label: String {
        if case .text(let text)? = fields[Self.labelKey]?.value { return text }
        return id.lowercased
    }

    /// The entity as a feed page sends it.
    public var snapshot: EntitySnapshot {
        EntitySnapshot(entityID: id, revision: revision, sequence: sequence, creator: creatorName, assignee: assigneeName, fields: fields)
    }

    /// A property's value as a `property:NAME` scope and the console's filter compare it with text: the
    /// text of a text, choice, date or time; a number or boolean written out; nil for anything else.
    public static func scopeText(_ value: AnswerValue?) -> String? {
        switch value {
        case .text(let text), .choice(let text), .date(let text), .time(let text), .dateTime(let text), .raw(let text): text
        case .integer(let number): String(number)
        case .decimal(let number): "\(number)"
        case .boolean(let flag): flag ? "true" : "false"
        default: nil
        }
    }
}

/// One entity of a feed read, as stored: its envelope, and its fields as the stored JSON.
public struct EntityFeedRow: Sendable, Hashable {
    public var id: UUID
    public var revision: Int64
    public var sequence: Int64
    public var creatorID: Int64
    public var creatorName: String
    public var assigneeID: Int64?
    public var assigneeName: String?
    public var deleted: Bool
    /// The stored `RecordFields` JSON.
    public var fields: String

    public init(
        id: UUID, revision: Int64, sequence: Int64, creatorID: Int64, creatorName: String, assigneeID: Int64?, assigneeName: String?,
        deleted: Bool, fields: String
    ) {
        self.id = id
        self.revision = revision
        self.sequence = sequence
        self.creatorID = creatorID
        self.creatorName = creatorName
        self.assigneeID = assigneeID
        self.assigneeName = assigneeName
        self.deleted = deleted
        self.fields = fields
    }
}

/// A slice of a list's feed, bounded in count and in bytes.
public struct EntityFeedPage: Sendable, Hashable {
    public var rows: [EntityFeedRow]
    public var hasMore: Bool

    public init(rows: [EntityFeedRow], hasMore: Bool) {
        self.rows = rows
        self.hasMore = hasMore
    }
}

/// One change of an entity, kept as its audit trail.
public struct EntityHistoryEntry: Sendable, Hashable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// A record created the entity.
        case create
        /// A record changed it.
        case update
        /// An admin imported it (created or replaced its values).
        case `import`
        /// An admin assigned it.
        case assign
        /// An admin deleted it.
        case delete
    }

    public var entityID: UUID
    /// The entity's revision after the change.
    public var revision: Int64
    public var kind: Kind
    /// The record whose entity change this was (nil for changes made on the server).
    public var recordID: UUID?
    public var userID: Int64
    /// Filled in when read.
    public var userName: String
    /// The device the record came from.
    public var clientID: String?
    public var at: Date
    /// The label and properties the change set, from what to what (``HistoryDetail/fields``).
    public var detail: HistoryDetail
    /// Filled in when read: the review state the record has now (a change from a rejected record stays
    /// applied, and the console says so).
    public var recordReview: ReviewState?

    public init(
        entityID: UUID, revision: Int64, kind: Kind, recordID: UUID?, userID: Int64, userName: String = "", clientID: String?, at: Date,
        detail: HistoryDetail, recordReview: ReviewState? = nil
    ) {
        self.entityID = entityID
        self.revision = revision
        self.kind = kind
        self.recordID = recordID
        self.userID = userID
        self.userName = userName
        self.clientID = clientID
        self.at = at
        self.detail = detail
        self.recordReview = recordReview
    }
}

/// An entity conflict-log entry: the losing value of one property, kept like a record field's.
public struct LoggedEntityConflict: Sendable, Hashable {
    public var entityID: UUID
    /// The record whose change met the conflict.
    public var recordID: UUID
    public var mutationID: String
    public var clientID: String
    public var entry: ConflictEntry
    /// Filled in when read.
    public var at: Date?

    public init(entityID: UUID, recordID: UUID, mutationID: String, clientID: String, entry: ConflictEntry, at: Date? = nil) {
        self.entityID = entityID
        self.recordID = recordID
        self.mutationID = mutationID
        self.clientID = clientID
        self.entry = entry
        self.at = at
    }
}

/// What the console's entity table asks for: a page of a list's entities ordered by label then id, found by
/// keyset (never by offset), so the last page of a million entities costs what the first does.
public struct EntityTableQuery: Sendable, Hashable {
    /// Where the page is in the order.
    public enum Position: Sendable, Hashable {
        /// The first `limit` rows.
        case first
        /// The `limit` rows after this key (the last row of the page before): the next page.
        case after(label: String, id: UUID)
        /// The `limit` rows before this key (the first row of the page after): the previous page.
        case before(label: String, id: UUID)
        /// The last `limit` rows.
        case last
    }

    /// Text the label contains (case-insensitive); nil for every entity.
    public var search: String?
    /// A property and the value it must have (as ``StoredEntity/scopeText(_:)`` writes it).
    public var filter: (name: String, value: String)?
    /// The member the entities are assigned to (by name); nil for any.
    public var assignee: String?
    /// Where the page is: first, after or before a row's key, last.
    public var position: Position
    /// Most rows the page holds.
    public var limit: Int

    public init(search: String? = nil, filter: (name: String, value: String)? = nil, assignee: String? = nil, position: Position = .first, limit: Int = 50) {
        self.search = search
        self.filter = filter
        self.assignee = assignee
        self.position = position
        self.limit = limit
    }

    /// Whether the page is read backwards from its end (`before` and `last`); the rows are still returned in
    /// the table's order.
    public var readsBackwards: Bool {
        switch position {
        case .first, .after: false
        case .before, .last: true
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.search == rhs.search && lhs.filter?.name == rhs.filter?.name && lhs.filter?.value == rhs.filter?.value
            && lhs.assignee == rhs.assignee && lhs.position == rhs.position && lhs.limit == rhs.limit
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(search)
        hasher.combine(filter?.name)
        hasher.combine(filter?.value)
        hasher.combine(assignee)
        hasher.combine(position)
        hasher.combine(limit)
    }
}

/// One row of the console's entity table.
public struct EntityTableRow: Sendable, Hashable {
    public var id: UUID
    public var label: String
    public var revision: Int64
    public var creatorName: String
    public var assigneeName: String?
    public var deleted: Bool
    public var updatedAt: Date
    /// The stored `RecordFields` JSON (the properties the table shows).
    public var fields: String

    public init(id: UUID, label: String, revision: Int64, creatorName: String, assigneeName: String?, deleted: Bool, updatedAt: Date, fields: String) {
        self.id = id
        self.label = label
        self.revision = revision
        self.creatorName = creatorName
        self.assigneeName = assigneeName
        self.deleted = deleted
        self.updatedAt = updatedAt
        self.fields = fields
    }
}

extension PushSnapshot {
    /// The entities a push batch may touch: those its mutations' entity changes name, and those the entity
    /// changes its records already hold name (a later edit of such a record changes the same entity).
    public static func entityIDs(named: [UUID], records: [UUID: StoredRecord]) -> [UUID] {
        var ids = named
        var seen = Set(named)
        for record in records.values {
            guard let answer = record.fields[RecordEntityChange.fieldID]?.value, let change = try? RecordEntityChange(answer: answer) else { continue }
            if seen.insert(change.entityID).inserted { ids.append(change.entityID) }
        }
        return ids.sorted { $0.uuidString < $1.uuidString }
    }
}

import FormModel
import Foundation

/// What a submitted record does to an entity, as the device decided it when the record was submitted.
///
/// The device evaluates the form's `EntityDeclaration` (create and update conditions, entity id, label) on
/// the record's answers at the moment of submission and keeps the outcome in the record itself, under the
/// reserved field id ``RecordEntityChange/fieldID``. The server applies the record's entity change from
/// this, never by evaluating the form again: what the device applied offline is what the server applies.
/// The properties' values are the record's `saveTo` fields, with those fields' stamps.
public struct RecordEntityChange: Codable, Sendable, Hashable {
    /// The record field that holds the change (`__entity`; field ids starting `__` are reserved).
    public static let fieldID = AnswerKey.entityChange

    public enum Action: String, Codable, Sendable, Hashable {
        case create
        case update
    }

    /// The entity list.
    public var list: String
    /// The entity: for a create, the record's own id (a UUID made where the record was made); for an
    /// update, the entity the form's `entityId` named.
    public var entityID: UUID
    public var action: Action
    /// The entity revision the device held when the record was submitted (0 for a create): the base of the
    /// three-way merge of each property, as a record edit's base revision is for its field.
    public var baseRevision: Int64
    /// The label the form's `label` expression gave; nil when the form has none (an update keeps the
    /// entity's label; a create without one is labelled by its id).
    public var label: String?

    private enum CodingKeys: String, CodingKey {
        case list, action, baseRevision, label
        case entityID = "entityId"
    }

    public init(list: String, entityID: UUID, action: Action, baseRevision: Int64, label: String?) {
        self.list = list
        self.entityID = entityID
        self.action = action
        self.baseRevision = baseRevision
        self.label = label
    }

    /// The change as the record stores it in ``fieldID``: a text answer holding this change's JSON (keys
    /// sorted, so the same change is always the same bytes and a retried push digests the same).
    public var answer: AnswerValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings, an enum, an integer and a UUID cannot fail.
        let data = (try? encoder.encode(self)) ?? Data()
        return .text(String(decoding: data, as: UTF8.self))
    }

    /// Reads the change a record stores in ``fieldID``; throws, saying what is wrong, for anything else.
    public init(answer: AnswerValue) throws {
        guard case .text(let json) = answer else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: [], debugDescription: "the field \(Self.fieldID) holds \(answer.tag), expected text holding the record's entity change"))
        }
        self = try JSONDecoder().decode(Self.self, from: Data(json.utf8))
    }
}

/// One entity as the server holds it, as sent in an entity feed page. Not `Codable`: the server writes the
/// page from the stored fields' bytes and the device reads it from the page's bytes, and ``RecordFields`` has
/// the byte codec alone.
public struct EntitySnapshot: Sendable, Hashable {
    /// The entity's id, made where it was created.
    public var entityID: UUID
    /// Increases with every applied change to the entity.
    public var revision: Int64
    /// The position of the entity's latest change in its list's feed.
    public var sequence: Int64
    /// The user who created it.
    public var creator: String
    /// The user it is assigned to, if any.
    public var assignee: String?
    /// The label and properties with their merge metadata: the label under the key `label`, each property
    /// under its name (the same representation, stamps and merge as a record's fields).
    public var fields: RecordFields

    public init(entityID: UUID, revision: Int64, sequence: Int64, creator: String, assignee: String? = nil, fields: RecordFields) {
        self.entityID = entityID
        self.revision = revision
        self.sequence = sequence
        self.creator = creator
        self.assignee = assignee
        self.fields = fields
    }
}

/// `GET /v1/projects/{project}/entities/{list}/changes?after=CURSOR`: a list's entities changed after a
/// cursor, in commit order, as this user's scope on the list sees them.
public struct EntityPage: Sendable, Hashable {
    public var list: String
    /// The entities in scope that changed, ordered by `sequence`.
    public var changes: [EntitySnapshot]
    /// Entities that changed and are not (or no longer) in scope: deleted, reassigned, filtered out. A
    /// device removes each one it holds.
    public var removed: [UUID]
    /// Pass as `after` for the next page; store it with the applied page.
    public var cursor: Int64
    /// Whether more changes follow right away.
    public var hasMore: Bool

    public init(list: String, changes: [EntitySnapshot], removed: [UUID], cursor: Int64, hasMore: Bool) {
        self.list = list
        self.changes = changes
        self.removed = removed
        self.cursor = cursor
        self.hasMore = hasMore
    }
}

/// Which of a list's entities a collector's device receives (reviewers and admins receive every one).
/// Spelled `all`, `creator`, `assignee` or `property:NAME` in the database, the API and the command line.
public enum EntityScope: Sendable, Hashable, Codable, LosslessStringConvertible {
    /// Every entity of the list (the default).
    case all
    /// The entities this user created.
    case createdByUser
    /// The entities assigned to this user.
    case assignedToUser
    /// The entities whose property `name` equals this user's property of the same name in the project
    /// (a collector's district); a user without the property receives none.
    case userProperty(String)

    public init?(_ text: String) {
        switch text {
        case "all": self = .all
        case "creator": self = .createdByUser
        case "assignee": self = .assignedToUser
        default:
            guard text.hasPrefix("property:"), case let name = String(text.dropFirst("property:".count)), !name.isEmpty else {
                return nil
            }
            self = .userProperty(name)
        }
    }

    public var description: String {
        switch self {
        case .all: "all"
        case .createdByUser: "creator"
        case .assignedToUser: "assignee"
        case .userProperty(let name): "property:" + name
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let scope = EntityScope(text) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "\"\(text)\" is not an entity scope: expected all, creator, assignee or property:NAME"))
        }
        self = scope
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

import Foundation
import FormModel
import Hummingbird
import ServerStorage
import SyncCore

/// The project's entity lists (`GET …/entities`) and each list's feed (`GET …/entities/{list}/changes`),
/// as docs/entity-lists.md ("The feed") says.
struct EntitiesController {
    let services: ServerServices

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("entities", use: lists)
        group.get("entities/:list/changes", use: changes)
    }

    /// One list as `GET …/entities` answers it.
    struct ListBody: Encodable {
        var name: String
        var properties: [EntityProperty]
        var scope: EntityScope
    }

    struct ListsBody: Encodable {
        var lists: [ListBody]
    }

    @Sendable func lists(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let lists = try await services.storage.entityLists(projectID: membership.projectID)
        return try .json(ListsBody(lists: lists.map { ListBody(name: $0.name, properties: $0.properties, scope: $0.scope) }))
    }

    @Sendable func changes(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        let name = context.parameters.get("list") ?? ""
        guard EntityScopeFilter.isListName(name) else {
            throw Problem.badRequest(
                "\"\(name)\" is not an entity list name: letters, digits, _ and -, starting with a letter or _ (not __), at most 64 characters.", field: "list")
        }
        let after = try SyncController.integer(request, "after", default: 0, range: 0...Int64.max)
        let limit = Int(try SyncController.integer(request, "limit", default: Int64(services.limits.defaultPageSize), range: 1...Int64(services.limits.maxPageSize)))
        let storage = services.storage
        guard let list = try await storage.entityList(projectID: membership.projectID, name: name) else {
            // A list no form saves to and nothing was imported into yet: nothing to send.
            var empty = EntityPageWriter(list: name)
            return .jsonBytes(empty.finish(cursor: after, hasMore: false))
        }
        let filter = EntityScopeFilter(
            scope: list.scope, role: membership.role, userID: principal.userID,
            userProperties: list.scope.propertyName == nil ? [:] : try await storage.userProperties(projectID: membership.projectID, userID: principal.userID))
        let page = try await storage.entityChanges(
            projectID: membership.projectID, list: name, after: after, limit: limit, maxBytes: services.limits.maxPageBytes)
        var writer = EntityPageWriter(list: name, capacity: page.rows.reduce(256) { $0 + $1.fields.utf8.count + 160 })
        for row in page.rows {
            if try filter.sends(row) { writer.append(row) } else { writer.remove(row.id) }
        }
        return .jsonBytes(writer.finish(cursor: page.rows.last?.sequence ?? after, hasMore: page.hasMore))
    }
}

extension EntityScope {
    /// The user property a `property:NAME` scope compares, else nil.
    var propertyName: String? {
        if case .userProperty(let name) = self { return name }
        return nil
    }
}

/// Which entities of a list a reader's device receives: every one for reviewers and admins; for collectors,
/// what the list's scope gives them.
struct EntityScopeFilter: Sendable {
    let scope: EntityScope
    let role: Role
    let userID: Int64
    let userProperties: [String: String]

    /// Whether the row is sent whole (else it is sent as removed): not deleted, and in scope.
    func sends(_ row: EntityFeedRow) throws -> Bool {
        guard !row.deleted else { return false }
        if role.seesSharedRecords { return true }
        switch scope {
        case .all: return true
        case .createdByUser: return row.creatorID == userID
        case .assignedToUser: return row.assigneeID == userID
        case .userProperty(let name):
            guard let mine = userProperties[name] else { return false }
            let fields = try RecordFields(jsonBytes: Array(row.fields.utf8))
            return StoredEntity.scopeText(fields[name]?.value) == mine
        }
    }

    /// Whether `name` is an entity list's name (the rule of `EntityDeclaration.list`).
    static func isListName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 64, !name.hasPrefix("__"), let first = name.unicodeScalars.first else { return false }
        let ascii = { (scalar: Unicode.Scalar) in scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) }
        guard ascii(first) && !("0"..."9").contains(first) || first == "_" else { return false }
        return name.unicodeScalars.allSatisfy { ascii($0) || $0 == "_" || $0 == "-" }
    }
}

/// An `EntityPage` written from the stored bytes: each entity's fields are copied into the page as they are.
struct EntityPageWriter {
    private var writer: JSONWriter
    private var removed: [UUID] = []

    init(list: String, capacity: Int = 256) {
        writer = JSONWriter(capacity: capacity)
        writer.beginObject()
        writer.key("list")
        writer.string(list)
        writer.key("changes")
        writer.beginArray()
    }

    mutating func append(_ row: EntityFeedRow) {
        writer.element()
        writer.beginObject()
        writer.key("entityId")
        writer.string(row.id.lowercased)
        writer.key("revision")
        writer.int(row.revision)
        writer.key("sequence")
        writer.int(row.sequence)
        writer.key("creator")
        writer.string(row.creatorName)
        if let assignee = row.assigneeName {
            writer.key("assignee")
            writer.string(assignee)
        }
        writer.key("fields")
        writer.raw(row.fields)
        writer.endObject()
    }

    mutating func remove(_ id: UUID) {
        removed.append(id)
    }

    mutating func finish(cursor: Int64, hasMore: Bool) -> [UInt8] {
        writer.endArray()
        writer.key("removed")
        writer.beginArray()
        for id in removed {
            writer.element()
            writer.string(id.lowercased)
        }
        writer.endArray()
        writer.key("cursor")
        writer.int(cursor)
        writer.key("hasMore")
        writer.bool(hasMore)
        writer.endObject()
        return writer.bytes
    }
}

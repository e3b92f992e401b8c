import Foundation
import FormModel
import Hummingbird
import ServerStorage
import SyncCore

/// The console's entity lists (docs/entity-lists.md, "The console"), for reviewers and admins:
/// `GET /console/projects/{project}/entities` (the project's lists), `GET …/entities/{list}` (a list's table:
/// search by label, filter by a property's value or by assignee, chosen property columns, a page at a time by
/// keyset — first, next, previous, last) and `GET …/entities/{list}/{entityId}` (one entity: its properties,
/// history and conflict log). What a project admin does to an entity from its page (edit, assign, delete) is
/// ``EntityAdminController``'s.
struct EntityPagesController {
    let services: ServerServices

    static let pageSize = 50
    /// How many of the list's properties the table shows when the reviewer chose none.
    static let defaultColumns = 3

    struct ListsPage {
        struct Item { var name: String; var link: String; var properties: String; var scope: String; var changes: Int64 }
        var chrome: ConsoleChrome
        var projectName: String
        var lists: [Item]
    }

    struct Option { var value: String; var label: String; var selected: Bool }
    struct Column { var name: String; var shown: Bool }
    struct Cell { var text: String }
    struct Row {
        var link: String
        var label: String
        var deleted: Bool
        var cells: [Cell]
        var creator: String
        var assignee: String
        var revision: Int64
        var changed: String
    }

    struct TablePage {
        var chrome: ConsoleChrome
        var projectName: String
        var list: String
        var action: String
        var search: String
        var propertyOptions: [Option]
        var value: String
        var assignee: String
        var columns: [Column]
        var shownColumns: [Column]
        var rows: [Row]
        var hasRows: Bool
        var firstLink: String?
        var previousLink: String?
        var nextLink: String?
        var lastLink: String?
    }

    struct PropertyItem { var name: String; var kind: String; var value: String }
    struct Change { var text: String }
    struct HistoryItem {
        var at: String
        var user: String
        var via: String?
        var kind: String
        var revision: Int64
        var recordLink: String?
        var recordShortID: String?
        /// Set when the record whose change this was has been rejected in review: the change stays applied.
        var rejected: Bool
        var reviewLabel: String?
        var changes: [Change]
        var hasChanges: Bool
    }
    struct ConflictItem {
        var property: String
        var at: String
        /// Which value the entity kept.
        var winner: String
        var serverWon: Bool
        var serverValue: String
        var serverBy: String
        var clientValue: String
        var clientBy: String
        var recordLink: String
        var recordShortID: String
    }

    struct EntityPage {
        var chrome: ConsoleChrome
        var projectName: String
        var list: String
        var listLink: String
        var entityID: String
        var label: String
        var deleted: Bool
        var revision: Int64
        var creator: String
        var assignee: String
        var created: String
        var updated: String
        var createdByLink: String?
        var properties: [PropertyItem]
        var history: [HistoryItem]
        var conflicts: [ConflictItem]
        var hasConflicts: Bool
        /// What a project admin may do to the entity (assign it, delete it); nil for a reviewer and once deleted.
        var manage: EntityAdminController.Manage?
    }

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("projects/:project/entities", use: lists)
        group.get("projects/:project/entities/:list", use: table)
        group.get("projects/:project/entities/:list/:entityId", use: entity)
    }

    /// The caller's membership, when its role sees every entity (reviewers and admins receive every entity
    /// of a list whatever its scope; collectors see theirs on their devices).
    func reviewer(_ context: AppRequestContext) throws -> Principal.Membership {
        let membership = try context.membership()
        guard membership.role.seesSharedRecords else {
            throw Problem.forbidden("Entity lists are shown to reviewers and admins; your role in this project is \(membership.role.rawValue).")
        }
        return membership
    }

    func list(_ membership: Principal.Membership, _ context: AppRequestContext) async throws -> EntityListInfo {
        guard let name = context.parameters.get("list"),
              let list = try await services.storage.entityList(projectID: membership.projectID, name: name)
        else { throw Problem.notFound("entity list") }
        return list
    }

    static func base(_ membership: Principal.Membership) -> String {
        "/console/projects/\(membership.projectName)/entities"
    }

    @Sendable func lists(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try reviewer(context)
        let lists = try await services.storage.entityLists(projectID: membership.projectID)
        let base = Self.base(membership)
        return ConsoleRenderer.page("entity-lists", ListsPage(
            chrome: ConsoleChrome(title: "Entity lists of \(membership.projectName)", context: context, project: membership.projectName),
            projectName: membership.projectName,
            lists: lists.map { list in
                ListsPage.Item(
                    name: list.name, link: base + "/" + list.name,
                    properties: list.properties.isEmpty ? "—" : list.properties.map { "\($0.name) (\($0.kind.rawValue))" }.joined(separator: ", "),
                    scope: list.scope.description, changes: list.lastSequence)
            }))
    }

    @Sendable func table(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try reviewer(context)
        let list = try await list(membership, context)
        let parameters = ConsoleQuery(request)
        let filter = try Filter(parameters, list: list)
        var query = filter.query
        query.limit = Self.pageSize + 1
        query.position = try Self.position(parameters)
        var rows = try await services.storage.entityTable(projectID: membership.projectID, list: list.name, query: query)
        // One row more than a page says whether there is more in the direction read; the extra row is the one
        // farthest from where the page starts.
        let hasMoreInDirection = rows.count > Self.pageSize
        if hasMoreInDirection { rows = query.readsBackwards ? Array(rows.dropFirst()) : Array(rows.dropLast()) }
        let hasEarlier: Bool
        let hasLater: Bool
        switch query.position {
        case .first: (hasEarlier, hasLater) = (false, hasMoreInDirection)
        case .after: (hasEarlier, hasLater) = (true, hasMoreInDirection)
        case .before: (hasEarlier, hasLater) = (hasMoreInDirection, true)
        case .last: (hasEarlier, hasLater) = (hasMoreInDirection, false)
        }
        let base = Self.base(membership) + "/" + list.name
        let shown = filter.columns
        let page = TablePage(
            chrome: ConsoleChrome(title: list.name, context: context, project: membership.projectName),
            projectName: membership.projectName, list: list.name, action: base, search: filter.search,
            propertyOptions: [Option(value: "", label: "Any property", selected: filter.property.isEmpty)] + list.properties.map {
                Option(value: $0.name, label: $0.name, selected: $0.name == filter.property)
            },
            value: filter.value, assignee: filter.assignee,
            columns: list.properties.map { Column(name: $0.name, shown: shown.contains($0.name)) },
            shownColumns: shown.map { Column(name: $0, shown: true) },
            rows: rows.map { row in
                let values = (try? RecordFields(jsonBytes: Array(row.fields.utf8)))?.values ?? [:]
                return Row(
                    link: base + "/" + row.id.lowercased, label: row.label, deleted: row.deleted,
                    cells: shown.map { Cell(text: SubmissionsController.short(values[$0]?.display() ?? "")) },
                    creator: row.creatorName, assignee: row.assigneeName ?? "—", revision: row.revision, changed: ConsoleTime.text(row.updatedAt))
            },
            hasRows: !rows.isEmpty,
            firstLink: hasEarlier ? base + filter.queryString(nil) : nil,
            previousLink: hasEarlier ? rows.first.map { base + filter.queryString(("before", Self.cursor($0))) } : nil,
            nextLink: hasLater ? rows.last.map { base + filter.queryString(("after", Self.cursor($0))) } : nil,
            lastLink: hasLater ? base + filter.queryString(("last", "1")) : nil)
        return ConsoleRenderer.page("entity-table", page)
    }

    /// A row's keyset in a page link: its id, a colon, its label.
    static func cursor(_ row: EntityTableRow) -> String {
        row.id.lowercased + ":" + row.label
    }

    /// The page the link asks for: `after=` or `before=` a row's keyset, `last=1`, or the first.
    static func position(_ parameters: ConsoleQuery) throws -> EntityTableQuery.Position {
        func key(_ name: String) throws -> (String, UUID)? {
            guard let text = parameters.get(name) else { return nil }
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let id = UUID(text: String(parts[0])) else {
                throw Problem.badRequest("The page link is damaged (\(name)=\(text)). Go back to the first page.", field: name)
            }
            return (String(parts[1]), id)
        }
        if let (label, id) = try key("after") { return .after(label: label, id: id) }
        if let (label, id) = try key("before") { return .before(label: label, id: id) }
        if parameters.get("last") == "1" { return .last }
        return .first
    }

    /// A query string as a browser's GET form sends it: `+` is a space (a typed `+` comes as `%2B`), the rest
    /// percent-encoded; a name may repeat (`col=a&col=b`).
    /// The table's search, filters and columns as the query string gives them.
    struct Filter {
        var search: String
        var property: String
        var value: String
        var assignee: String
        var columns: [String]
        /// Whether the reviewer chose the columns (`col=`), so that the page links keep them.
        var chosenColumns: Bool

        init(_ parameters: ConsoleQuery, list: EntityListInfo) throws {
            search = (parameters.get("q") ?? "").trimmingCharacters(in: .whitespaces)
            property = parameters.get("property") ?? ""
            value = parameters.get("value") ?? ""
            assignee = (parameters.get("assignee") ?? "").trimmingCharacters(in: .whitespaces)
            let declared = list.properties.map(\.name)
            if !property.isEmpty, !declared.contains(property) {
                throw Problem.badRequest(
                    "The list \(list.name) has no property \"\(property)\"; filter by one of: \(declared.joined(separator: ", ")).", field: "property")
            }
            let chosen = parameters.getAll("col").filter { !$0.isEmpty }
            if let unknown = chosen.first(where: { !declared.contains($0) }) {
                throw Problem.badRequest("The list \(list.name) has no property \"\(unknown)\" to show as a column.", field: "col")
            }
            chosenColumns = !chosen.isEmpty
            columns = chosen.isEmpty ? Array(declared.prefix(EntityPagesController.defaultColumns)) : declared.filter { chosen.contains($0) }
        }

        var query: EntityTableQuery {
            EntityTableQuery(
                search: search.isEmpty ? nil : search, filter: property.isEmpty ? nil : (property, value),
                assignee: assignee.isEmpty ? nil : assignee)
        }

        func queryString(_ position: (String, String)?) -> String {
            var items = [("q", search), ("property", property), ("value", property.isEmpty ? "" : value), ("assignee", assignee)]
            if chosenColumns { items += columns.map { ("col", $0) } }
            if let position { items.append(position) }
            let query = SubmissionsController.Filter.query(items)
            return query == "?" ? "" : query
        }
    }

    @Sendable func entity(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try reviewer(context)
        let list = try await list(membership, context)
        guard let id = context.parameters.get("entityId").flatMap(UUID.init(text:)),
              let entity = try await services.storage.entity(projectID: membership.projectID, id: id), entity.list == list.name
        else { throw Problem.notFound("entity") }
        return try await page(entity, list: list, membership: membership, context: context)
    }

    /// The entity's page; `edit` is the edit form as the admin sent it back (changed since, or refused), else
    /// the form holds the entity's values.
    func page(
        _ entity: StoredEntity, list: EntityListInfo, membership: Principal.Membership, context: AppRequestContext, edit: EntityAdminController.EditForm? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let id = entity.id
        let history = try await services.storage.entityHistory(projectID: membership.projectID, entityID: id)
        let conflicts = try await services.storage.entityConflicts(projectID: membership.projectID, entityID: id)
        let project = "/console/projects/\(membership.projectName)"
        func show(_ value: AnswerValue?) -> String { value?.display() ?? "(empty)" }
        func recordLink(_ record: UUID) -> String { project + "/records/" + record.lowercased }
        // Who wrote a value: the history entry of the revision that set it names the user, device and record.
        let byRevision = Dictionary(history.map { ($0.revision, $0) }, uniquingKeysWith: { _, last in last })
        func writer(_ state: FieldState?) -> String {
            guard let state else { return "" }
            if let entry = byRevision[state.revision] { return "\(entry.userName) on \(state.clientID)" }
            return state.clientID
        }
        var authors: [UUID: String] = [:]
        for conflict in conflicts where authors[conflict.recordID] == nil {
            if let record = try await services.storage.record(projectID: membership.projectID, id: conflict.recordID) {
                authors[conflict.recordID] = record.authorName
            }
        }
        let kinds = Dictionary(list.properties.map { ($0.name, $0.kind.rawValue) }, uniquingKeysWith: { first, _ in first })
        let names = (Set(list.properties.map(\.name)).union(entity.fields.values.keys)).subtracting([StoredEntity.labelKey]).sorted()
        let createdBy = history.first { $0.kind == .create }?.recordID
        var manage: EntityAdminController.Manage?
        if membership.role == .admin, !entity.deleted {
            let members = try await services.storage.memberIDs(projectID: membership.projectID).keys.sorted()
            manage = EntityAdminController.Manage(
                action: Self.base(membership) + "/" + list.name + "/" + entity.id.lowercased, csrf: context.consoleCSRF,
                members: [Option(value: "", label: "nobody", selected: entity.assigneeName == nil)]
                    + members.map { Option(value: $0, label: $0, selected: $0 == entity.assigneeName) },
                edit: edit ?? EntityAdminController.editForm(entity, list: list))
        }
        let page = EntityPage(
            chrome: ConsoleChrome(title: entity.label, context: context, project: membership.projectName),
            projectName: membership.projectName, list: list.name, listLink: Self.base(membership) + "/" + list.name,
            entityID: entity.id.lowercased, label: entity.label, deleted: entity.deleted, revision: entity.revision,
            creator: entity.creatorName, assignee: entity.assigneeName ?? "—",
            created: ConsoleTime.text(entity.createdAt), updated: ConsoleTime.text(entity.updatedAt),
            createdByLink: createdBy.map(recordLink),
            properties: names.map { PropertyItem(name: $0, kind: kinds[$0] ?? "undeclared", value: show(entity.fields.values[$0])) },
            history: history.map { entry in
                let keys = entry.detail.changes.map(\.fieldID)
                let review = entry.recordReview
                return HistoryItem(
                    at: ConsoleTime.text(entry.at), user: entry.userName, via: entry.clientID == EntityEdit.writer ? nil : entry.clientID, kind: Self.describe(entry), revision: entry.revision,
                    recordLink: entry.recordID.map(recordLink), recordShortID: entry.recordID.map { String($0.lowercased.prefix(8)) },
                    rejected: review == .rejected, reviewLabel: review.map { ConsoleLabels.review($0) },
                    changes: entry.detail.changes.map { change in
                        Change(text: "\(change.fieldID): \(show(change.diff.from)) → \(show(change.diff.to))")
                    },
                    hasChanges: !keys.isEmpty)
            },
            conflicts: conflicts.map { logged in
                let entry = logged.entry
                let serverWon = entry.winner == .server
                return ConflictItem(
                    property: entry.fieldID ?? "—", at: ConsoleTime.text(logged.at),
                    winner: serverWon ? "kept the value it held; the record's value is logged" : "took the record's value; the one it held is logged",
                    serverWon: serverWon,
                    serverValue: show(entry.server?.value), serverBy: writer(entry.server),
                    clientValue: show(entry.client?.value),
                    clientBy: [authors[logged.recordID], logged.clientID].compactMap { $0 }.joined(separator: " on "),
                    recordLink: recordLink(logged.recordID), recordShortID: String(logged.recordID.lowercased.prefix(8)))
            },
            hasConflicts: !conflicts.isEmpty, manage: manage)
        return ConsoleRenderer.page("entity", page, status: status)
    }


    static func describe(_ entry: EntityHistoryEntry) -> String {
        switch entry.kind {
        case .create: "created by a record"
        case .update where entry.recordID == nil: "edited in the console"
        case .update: "updated by a record"
        case .import: "imported"
        case .assign: "assigned"
        case .delete: "deleted"
        }
    }
}
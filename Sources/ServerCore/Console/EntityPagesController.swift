import Foundation
import FormModel
import Hummingbird
import ServerStorage
import SyncCore

/// The console's entity lists (docs/entity-lists.md, "The console"), for reviewers and admins:
/// `GET /console/projects/{project}/entities` (the project's lists), `GET …/entities/{list}` (a list's table:
/// search by label, filter by a property's value or by assignee, chosen property columns, a page at a time by
/// keyset — first, next, previous, last) and `GET …/entities/{list}/{entityId}` (one entity: its properties,
/// history and conflict log).
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
        var recordShortId: String?
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
        var recordShortId: String
    }

    struct EntityPage {
        var chrome: ConsoleChrome
        var projectName: String
        var list: String
        var listLink: String
        var entityId: String
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
        var manage: Manage?
    }

    /// The entity page's forms for a project admin: the edit form, the members to assign it to, and the session's
    /// CSRF token.
    struct Manage {
        var action: String
        var csrf: String?
        var members: [Option]
        var edit: EditForm
    }

    /// The form that edits the label and property values: each input holds the value as text, beside the text the
    /// page showed (`was`), so that only what the admin changed is sent as an edit.
    struct EditForm {
        struct Input { var name: String; var kind: String; var text: String; var was: String; var inputID: String }
        /// The revision the values shown are of (the edit's base).
        var base: Int64
        var label: String
        var labelWas: String
        var inputs: [Input]
        /// Properties changed since the admin's page was shown that the edit would overwrite: shown, with the
        /// button that overwrites them.
        var clashes: [ClashItem]
        var hasClashes: Bool
        /// Why the edit was refused (a value that is not of its property's kind).
        var error: String?
    }
    struct ClashItem { var property: String; var current: String; var wanted: String }

    /// The posted edit: `base`, `label`, `labelWas`, and per property `value[NAME]` and `was[NAME]`.
    struct EditPost: Decodable {
        var base: Int64?
        var label: String?
        var labelWas: String?
        var value: [String: String]?
        var was: [String: String]?
    }

    struct AssignForm: Decodable { var assignee: String? }
    struct DeleteForm: Decodable { var confirm: String? }

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("projects/:project/entities", use: lists)
        group.get("projects/:project/entities/:list", use: table)
        group.get("projects/:project/entities/:list/:entityId", use: entity)
        group.post("projects/:project/entities/:list/:entityId/edit", use: edit)
        group.post("projects/:project/entities/:list/:entityId/assign", use: assign)
        group.post("projects/:project/entities/:list/:entityId/delete", use: delete)
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
              let list = try await services.storage.entityList(projectId: membership.projectId, name: name)
        else { throw Problem.notFound("entity list") }
        return list
    }

    static func base(_ membership: Principal.Membership) -> String {
        "/console/projects/\(membership.projectName)/entities"
    }

    @Sendable func lists(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try reviewer(context)
        let lists = try await services.storage.entityLists(projectId: membership.projectId)
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
        var rows = try await services.storage.entityTable(projectId: membership.projectId, list: list.name, query: query)
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
            guard parts.count == 2, let id = UUID(uuidString: String(parts[0])) else {
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
        guard let id = context.parameters.get("entityId").flatMap(UUID.init(uuidString:)),
              let entity = try await services.storage.entity(projectId: membership.projectId, id: id), entity.list == list.name
        else { throw Problem.notFound("entity") }
        return try await page(entity, list: list, membership: membership, context: context)
    }

    /// The entity's page; `edit` is the edit form as the admin sent it back (changed since, or refused), else
    /// the form holds the entity's values.
    func page(
        _ entity: StoredEntity, list: EntityListInfo, membership: Principal.Membership, context: AppRequestContext, edit: EditForm? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let id = entity.id
        let history = try await services.storage.entityHistory(projectId: membership.projectId, entityId: id)
        let conflicts = try await services.storage.entityConflicts(projectId: membership.projectId, entityId: id)
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
            if let record = try await services.storage.record(projectId: membership.projectId, id: conflict.recordID) {
                authors[conflict.recordID] = record.authorName
            }
        }
        let kinds = Dictionary(list.properties.map { ($0.name, $0.kind.rawValue) }, uniquingKeysWith: { first, _ in first })
        let names = (Set(list.properties.map(\.name)).union(entity.fields.values.keys)).subtracting([StoredEntity.labelKey]).sorted()
        let createdBy = history.first { $0.kind == .create }?.recordID
        var manage: Manage?
        if membership.role == .admin, !entity.deleted {
            let members = try await services.storage.memberIds(projectId: membership.projectId).keys.sorted()
            manage = Manage(
                action: Self.base(membership) + "/" + list.name + "/" + entity.id.lowercased, csrf: context.consoleCSRF,
                members: [Option(value: "", label: "nobody", selected: entity.assigneeName == nil)]
                    + members.map { Option(value: $0, label: $0, selected: $0 == entity.assigneeName) },
                edit: edit ?? Self.editForm(entity, list: list))
        }
        let page = EntityPage(
            chrome: ConsoleChrome(title: entity.label, context: context, project: membership.projectName),
            projectName: membership.projectName, list: list.name, listLink: Self.base(membership) + "/" + list.name,
            entityId: entity.id.lowercased, label: entity.label, deleted: entity.deleted, revision: entity.revision,
            creator: entity.creatorName, assignee: entity.assigneeName ?? "—",
            created: ConsoleTime.text(entity.createdAt), updated: ConsoleTime.text(entity.updatedAt),
            createdByLink: createdBy.map(recordLink),
            properties: names.map { PropertyItem(name: $0, kind: kinds[$0] ?? "undeclared", value: show(entity.fields.values[$0])) },
            history: history.map { entry in
                let keys = entry.detail.fields.keys.sorted()
                let review = entry.recordReview
                return HistoryItem(
                    at: ConsoleTime.text(entry.at), user: entry.userName, via: entry.clientID == EntityEdit.writer ? nil : entry.clientID, kind: Self.describe(entry), revision: entry.revision,
                    recordLink: entry.recordID.map(recordLink), recordShortId: entry.recordID.map { String($0.lowercased.prefix(8)) },
                    rejected: review == .rejected, reviewLabel: review.map { ConsoleLabels.review($0) },
                    changes: keys.map { key in
                        let diff = entry.detail.fields[key]
                        return Change(text: "\(key): \(show(diff?.from)) → \(show(diff?.to))")
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
                    recordLink: recordLink(logged.recordID), recordShortId: String(logged.recordID.lowercased.prefix(8)))
            },
            hasConflicts: !conflicts.isEmpty, manage: manage)
        return ConsoleRenderer.page("entity", page, status: status)
    }

    /// The edit form holding the entity's label and declared properties as they are.
    static func editForm(_ entity: StoredEntity, list: EntityListInfo) -> EditForm {
        let label = editText(entity.fields[StoredEntity.labelKey]?.value)
        return EditForm(
            base: entity.revision, label: label, labelWas: label,
            inputs: list.properties.enumerated().map { offset, property in
                let text = editText(entity.fields[property.name]?.value)
                return EditForm.Input(name: property.name, kind: property.kind.rawValue, text: text, was: text, inputID: "property-\(offset)")
            },
            clashes: [], hasClashes: false, error: nil)
    }

    /// A value as the edit form's input holds it, written as an import's CSV cell is (``EntityImporter``): what
    /// reads back as the same value.
    static func editText(_ value: AnswerValue?) -> String {
        guard let value else { return "" }
        if case .choices(let values) = value { return values.joined(separator: " ") }
        return StoredEntity.scopeText(value) ?? value.display()
    }

    /// The entity a project admin's form names, of the list in the address, not deleted.
    func managed(_ context: AppRequestContext, _ does: String) async throws -> (Principal.Membership, StoredEntity) {
        let membership = try context.adminMembership(does)
        let list = try await list(membership, context)
        guard let id = context.parameters.get("entityId").flatMap(UUID.init(uuidString:)),
              let entity = try await services.storage.entity(projectId: membership.projectId, id: id), entity.list == list.name, !entity.deleted
        else { throw Problem.notFound("entity") }
        return (membership, entity)
    }

    /// `POST …/entities/{list}/{entityId}/edit`: a project admin's edit of the label and property values, as
    /// ``EntityEdit`` applies it (merged per property, stamped with the server's clock, in the list's feed for the
    /// devices in scope). Only the values the admin changed are sent; one that changed since the page was shown
    /// comes back with both values and a button that overwrites it (409), and a value not of its property's kind
    /// comes back with what is expected (400). Nothing is written in either case.
    @Sendable func edit(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (membership, entity) = try await managed(context, "edits entities")
        let list = try await list(membership, context)
        var request = request
        let post = try await request.consoleForm(EditPost.self)
        guard let base = post.base else {
            throw Problem.badRequest("The edit form is damaged (no base revision); reload the entity's page and edit again.", field: "base")
        }
        var form = Self.editForm(entity, list: list)
        form.base = base
        var values: [String: AnswerValue?] = [:]
        var refused: [String] = []
        // A form without a label (a script's) leaves the label as it is.
        let label = (post.label ?? form.label).trimmingCharacters(in: .whitespaces)
        form.label = post.label ?? form.label
        form.labelWas = post.labelWas ?? form.labelWas
        if label != form.labelWas.trimmingCharacters(in: .whitespaces) {
            if label.isEmpty { refused.append("The label cannot be empty: it is what forms and the console show of the entity.") }
            values[StoredEntity.labelKey] = .some(.text(label))
        }
        for index in form.inputs.indices {
            let property = list.properties[index]
            let text = post.value?[property.name] ?? form.inputs[index].text
            let was = post.was?[property.name] ?? form.inputs[index].was
            form.inputs[index].text = text
            form.inputs[index].was = was
            guard text.trimmingCharacters(in: .whitespaces) != was.trimmingCharacters(in: .whitespaces) else { continue }
            if text.trimmingCharacters(in: .whitespaces).isEmpty {
                values[property.name] = .some(nil)
            } else if let value = EntityImporter.value(text, kind: property.kind) {
                values[property.name] = value
            } else {
                refused.append("\(property.name): \"\(text)\" is not \(EntityImporter.expected(property.kind)).")
            }
        }
        if !refused.isEmpty {
            form.error = refused.joined(separator: " ") + " Nothing was saved."
            return try await page(entity, list: list, membership: membership, context: context, edit: form, status: .badRequest)
        }
        guard !values.isEmpty else {
            return ConsoleRenderer.redirect(to: Self.base(membership) + "/" + entity.list + "/" + entity.id.lowercased)
        }
        let principal = try context.requirePrincipal()
        let outcome = try await services.storage.editEntity(
            projectId: membership.projectId, list: entity.list, id: entity.id,
            edit: EntityEdit(baseRevision: base, values: values, stamp: services.clock.now()), by: principal.userId)
        switch outcome {
        case .notFound:
            throw Problem.notFound("entity")
        case .unchanged:
            break
        case .changedSince(let current, let clashes):
            // The form again with what the admin typed, now based on the revision shown, and the values it would replace.
            var again = Self.editForm(current, list: list)
            again.label = form.label
            for index in again.inputs.indices where values[list.properties[index].name] != nil {
                again.inputs[index].text = form.inputs[index].text
            }
            if values[StoredEntity.labelKey] == nil { again.label = again.labelWas }
            again.clashes = clashes.map {
                ClashItem(property: $0.property, current: $0.current?.display() ?? "(empty)", wanted: $0.wanted?.display() ?? "(empty)")
            }
            again.hasClashes = true
            return try await page(current, list: list, membership: membership, context: context, edit: again, status: .conflict)
        case .applied(let written, let changes):
            var detail = ["label": written.label]
            for (property, change) in changes {
                // The label's own change under `relabel`: `label` names the entity as it is now, as in every entity act.
                detail[property == StoredEntity.labelKey ? "relabel" : property] = "\(change.from?.display() ?? "(empty)") → \(change.to?.display() ?? "(empty)")"
            }
            await services.audit(
                .entityEdited, request: request, context: context, projectId: membership.projectId,
                subject: "\(entity.list)/\(entity.id.lowercased)", detail: detail)
        }
        return ConsoleRenderer.redirect(to: Self.base(membership) + "/" + entity.list + "/" + entity.id.lowercased)
    }

    /// `POST …/entities/{list}/{entityId}/assign`: assigns the entity to a member (or to nobody); a list scoped
    /// to assignees moves it from the old assignee's devices to the new one's at their next sync.
    @Sendable func assign(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (membership, entity) = try await managed(context, "assigns entities")
        var request = request
        let name = (try await request.consoleForm(AssignForm.self).assignee ?? "").trimmingCharacters(in: .whitespaces)
        if !name.isEmpty, try await services.storage.memberIds(projectId: membership.projectId)[name] == nil {
            throw Problem.badRequest("\"\(name)\" is not a member of \(membership.projectName); choose one of the project's people.", field: "assignee")
        }
        let principal = try context.requirePrincipal()
        let assigned = try await services.storage.assignEntities(
            projectId: membership.projectId, list: entity.list, ids: [entity.id], userName: name.isEmpty ? nil : name, by: principal.userId)
        // Deleted meanwhile: nothing was assigned, and nothing is recorded.
        guard assigned > 0 else { throw Problem.notFound("entity") }
        await services.audit(
            .entityAssigned, request: request, context: context, projectId: membership.projectId,
            subject: "\(entity.list)/\(entity.id.lowercased)", detail: ["label": entity.label, "assignee": name.isEmpty ? "nobody" : name])
        return ConsoleRenderer.redirect(to: Self.base(membership) + "/" + entity.list + "/" + entity.id.lowercased)
    }

    /// `POST …/entities/{list}/{entityId}/delete` with `confirm=yes`: deletes the entity (its history and conflicts
    /// stay); devices drop it at their next sync.
    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (membership, entity) = try await managed(context, "deletes entities")
        var request = request
        guard try await request.consoleForm(DeleteForm.self).confirm == "yes" else {
            throw Problem.badRequest("Tick \"Yes, delete \(entity.label)\" to delete the entity; nothing was deleted.", field: "confirm")
        }
        let principal = try context.requirePrincipal()
        if try await services.storage.deleteEntity(projectId: membership.projectId, list: entity.list, id: entity.id, by: principal.userId) {
            await services.audit(
                .entityDeleted, request: request, context: context, projectId: membership.projectId,
                subject: "\(entity.list)/\(entity.id.lowercased)", detail: ["label": entity.label])
        }
        return ConsoleRenderer.redirect(to: Self.base(membership) + "/" + entity.list + "/" + entity.id.lowercased)
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

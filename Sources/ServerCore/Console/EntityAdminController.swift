import Foundation
import FormModel
import Hummingbird
import ServerStorage
import SyncCore

/// What a project admin does to an entity from its console page (docs/entity-lists.md, "The console"):
/// `POST …/entities/{list}/{entityId}/edit` (the label and property values, merged like a device's change),
/// `…/assign` (to a member, or to nobody) and `…/delete`. The pages these forms sit on, and that an edit
/// refused or changed since comes back to, are ``EntityPagesController``'s.
struct EntityAdminController {
    let services: ServerServices

    /// The read pages, which show the admin's forms and render an edit that comes back.
    var pages: EntityPagesController { EntityPagesController(services: services) }

    /// The entity page's forms for a project admin: the edit form, the members to assign it to, and the session's
    /// CSRF token.
    struct Manage {
        var action: String
        var csrf: String?
        var members: [EntityPagesController.Option]
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
        group.post("projects/:project/entities/:list/:entityId/edit", use: edit)
        group.post("projects/:project/entities/:list/:entityId/assign", use: assign)
        group.post("projects/:project/entities/:list/:entityId/delete", use: delete)
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
        let list = try await pages.list(membership, context)
        guard let id = context.parameters.get("entityId").flatMap(UUID.init(text:)),
              let entity = try await services.storage.entity(projectID: membership.projectID, id: id), entity.list == list.name, !entity.deleted
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
        let list = try await pages.list(membership, context)
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
            return try await pages.page(entity, list: list, membership: membership, context: context, edit: form, status: .badRequest)
        }
        guard !values.isEmpty else {
            return ConsoleRenderer.redirect(to: EntityPagesController.base(membership) + "/" + entity.list + "/" + entity.id.lowercased)
        }
        let principal = try context.requirePrincipal()
        let outcome = try await services.storage.editEntity(
            projectID: membership.projectID, list: entity.list, id: entity.id,
            edit: EntityEdit(baseRevision: base, values: values, stamp: services.clock.now()), by: principal.userID)
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
            return try await pages.page(current, list: list, membership: membership, context: context, edit: again, status: .conflict)
        case .applied(let written, let changes):
            var detail = ["label": written.label]
            for (property, change) in changes {
                // The label's own change under `relabel`: `label` names the entity as it is now, as in every entity act.
                detail[property == StoredEntity.labelKey ? "relabel" : property] = "\(change.from?.display() ?? "(empty)") → \(change.to?.display() ?? "(empty)")"
            }
            await services.audit(
                .entityEdited, request: request, context: context, projectID: membership.projectID,
                subject: "\(entity.list)/\(entity.id.lowercased)", detail: detail)
        }
        return ConsoleRenderer.redirect(to: EntityPagesController.base(membership) + "/" + entity.list + "/" + entity.id.lowercased)
    }

    /// `POST …/entities/{list}/{entityId}/assign`: assigns the entity to a member (or to nobody); a list scoped
    /// to assignees moves it from the old assignee's devices to the new one's at their next sync.
    @Sendable func assign(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (membership, entity) = try await managed(context, "assigns entities")
        var request = request
        let name = (try await request.consoleForm(AssignForm.self).assignee ?? "").trimmingCharacters(in: .whitespaces)
        if !name.isEmpty, try await services.storage.memberIDs(projectID: membership.projectID)[name] == nil {
            throw Problem.badRequest("\"\(name)\" is not a member of \(membership.projectName); choose one of the project's people.", field: "assignee")
        }
        let principal = try context.requirePrincipal()
        let assigned = try await services.storage.assignEntities(
            projectID: membership.projectID, list: entity.list, ids: [entity.id], userName: name.isEmpty ? nil : name, by: principal.userID)
        // Deleted meanwhile: nothing was assigned, and nothing is recorded.
        guard assigned > 0 else { throw Problem.notFound("entity") }
        await services.audit(
            .entityAssigned, request: request, context: context, projectID: membership.projectID,
            subject: "\(entity.list)/\(entity.id.lowercased)", detail: ["label": entity.label, "assignee": name.isEmpty ? "nobody" : name])
        return ConsoleRenderer.redirect(to: EntityPagesController.base(membership) + "/" + entity.list + "/" + entity.id.lowercased)
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
        if try await services.storage.deleteEntity(projectID: membership.projectID, list: entity.list, id: entity.id, by: principal.userID) {
            await services.audit(
                .entityDeleted, request: request, context: context, projectID: membership.projectID,
                subject: "\(entity.list)/\(entity.id.lowercased)", detail: ["label": entity.label])
        }
        return ConsoleRenderer.redirect(to: EntityPagesController.base(membership) + "/" + entity.list + "/" + entity.id.lowercased)
    }
}

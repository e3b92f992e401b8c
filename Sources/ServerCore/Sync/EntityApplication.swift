import Foundation
import FormModel
import ServerStorage
import SyncCore

/// What a record's applied change does to its entity (docs/entity-lists.md, "What a submitted record does"):
/// the entity after the merge, its history entry, and the losing values.
struct EntityApplication: Sendable {
    var entity: StoredEntity
    /// nil when the change set nothing (every value already there, or every pushed value lost).
    var history: EntityHistoryEntry?
    var conflicts: [ConflictEntry]
}

extension PushPlanner {
    /// The ids of the entities the mutations' entity changes name (what a push's snapshot reads and locks).
    static func entityIDs(_ mutations: [Mutation]) -> [UUID] {
        var seen = Set<UUID>()
        var ids: [UUID] = []
        for mutation in mutations {
            guard let answer = mutation.changes[RecordEntityChange.fieldID]?.value, let change = try? RecordEntityChange(answer: answer) else { continue }
            if seen.insert(change.entityID).inserted { ids.append(change.entityID) }
        }
        return ids
    }

    /// The entity change of a submitted record after an applied change, or the problem that refuses the
    /// mutation (nothing of it is applied): the change is read from the record's `__entity`, checked against
    /// the form's `entity` declaration, and applied field by field with `FieldMerge` (last writer wins, the
    /// change's base revision as each property's base, the stamps of the record's fields).
    ///
    /// The first time (the record becomes submitted, or its `__entity` changes) every `saveTo` field the
    /// record holds and the label are applied; afterwards (a fix after review) only the `saveTo` fields the
    /// change set, so an edit never re-sends values it did not touch.
    func entityApplication(
        record: MergeableRecord, current: StoredRecord?, changedFields: [String], mutation: Mutation, form: FormDefinition,
        authorID: Int64, entities: [UUID: StoredEntity]
    ) -> Result<EntityApplication?, Problem> {
        guard record.state == .submitted, let entityState = record.fields[RecordEntityChange.fieldID], let answer = entityState.value else { return .success(nil) }
        let field = RecordEntityChange.fieldID
        let change: RecordEntityChange
        do {
            change = try RecordEntityChange(answer: answer)
        } catch {
            return .failure(Problem(
                .unprocessableContent, "entity-change-invalid", title: "Invalid entity change",
                detail: "Record \(mutation.recordID) holds in \(field) something that is not an entity change: \(error). It holds the list, entity id, action (create or update), base revision and label as JSON.",
                field: field))
        }
        guard let declaration = form.entity else {
            return .failure(Problem(
                .unprocessableContent, "entity-not-declared", title: "Form saves to no entity list",
                detail: "Record \(mutation.recordID) changes the entity \(change.entityID.lowercased) of the list \"\(change.list)\", but the form \"\(form.id)\" version \(form.version) declares no entity list.",
                field: field))
        }
        guard change.list == declaration.list else {
            return .failure(Problem(
                .unprocessableContent, "entity-list-mismatch", title: "Entity change names another list",
                detail: "Record \(mutation.recordID) changes an entity of the list \"\(change.list)\", but the form \"\(form.id)\" version \(form.version) saves to the list \"\(declaration.list)\".",
                field: field))
        }
        switch change.action {
        case .create where !declaration.creates, .update where !declaration.updates:
            return .failure(Problem(
                .unprocessableContent, "entity-action-not-declared", title: "Entity change the form does not make",
                detail: "Record \(mutation.recordID) would \(change.action.rawValue) an entity of the list \"\(change.list)\", but the form \"\(form.id)\" version \(form.version) only \(declaration.creates ? "creates" : "updates") entities.",
                field: field))
        case .create where change.entityID != mutation.recordID:
            return .failure(Problem(
                .unprocessableContent, "entity-id-not-record", title: "Created entity's id is not the record's",
                detail: "Record \(mutation.recordID) creates the entity \(change.entityID.lowercased); an entity a record creates takes the record's own id (\(mutation.recordID.lowercased)).",
                field: field))
        default:
            break
        }
        let existing = entities[change.entityID]
        if let existing, existing.list != change.list {
            return .failure(Problem(
                .conflict, "entity-list-mismatch", title: "Entity belongs to another list",
                detail: "Record \(mutation.recordID) changes the entity \(change.entityID.lowercased) as one of the list \"\(change.list)\"; it belongs to the list \"\(existing.list)\".",
                field: field))
        }
        if existing?.deleted ?? false || (change.action == .update && existing == nil) {
            let what = existing == nil ? "does not exist" : "was deleted"
            return .failure(Problem(
                .unprocessableContent, "entity-not-found", title: "Entity not found",
                detail: "Record \(mutation.recordID) \(change.action == .update ? "updates" : "creates") the entity \(change.entityID.lowercased) of the list \"\(change.list)\", which \(what) on the server. "
                    + "Nothing of this change was applied. Sync to get the list's entities, then choose an entity that exists.",
                field: field))
        }
        let first = changedFields.contains(field) || current?.state != .submitted
        let applied = first ? nil : Set(changedFields)
        var entity = existing ?? StoredEntity(list: change.list, id: change.entityID, revision: 0, creatorID: authorID, fields: RecordFields(), createdAt: now)
        let revision = entity.revision + 1
        var diffs: [String: HistoryDetail.FieldDiff] = [:]
        var conflicts: [ConflictEntry] = []
        func merge(_ property: String, _ state: FieldState) {
            let result = FieldMerge.merge(
                fieldID: property, server: entity.fields[property], change: FieldChange(value: state.value, baseRevision: change.baseRevision, hlc: state.hlc),
                clientID: state.clientID, policy: .lastWriterWins, revision: revision)
            if let newState = result.newState {
                diffs[property] = .init(from: entity.fields[property]?.value, to: newState.value)
                entity.fields[property] = newState
            }
            if let conflict = result.conflict { conflicts.append(conflict) }
        }
        for fieldID in FormFields(form: form).order {
            guard let property = form.field(fieldID)?.saveTo, applied?.contains(fieldID) ?? true, let state = record.fields[fieldID] else { continue }
            merge(property, state)
        }
        if first, let label = change.label {
            merge(StoredEntity.labelKey, FieldState(value: .text(label), revision: 0, hlc: entityState.hlc, clientID: entityState.clientID))
        }
        guard !diffs.isEmpty || existing == nil else { return .success(EntityApplication(entity: entity, history: nil, conflicts: conflicts)) }
        entity.revision = revision
        entity.updatedAt = now
        let history = EntityHistoryEntry(
            entityID: entity.id, revision: revision, kind: existing == nil ? .create : .update, recordID: mutation.recordID, userID: userID,
            clientID: clientID, at: now, detail: HistoryDetail(fields: diffs))
        return .success(EntityApplication(entity: entity, history: history, conflicts: conflicts))
    }
}

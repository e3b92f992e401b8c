import Foundation
import FormModel
import GRDB
internal import SyncCore

/// A submitted record's entity change (docs/entity-lists.md): the form's entity declaration evaluated in the
/// submitting transaction and applied to the entity on this device.
extension DraftStore {
    /// Evaluates the form's entity declaration on a record being submitted (in the submitting transaction),
    /// stores the outcome in the record's `__entity` field as an unsent edit stamped `clock`, and applies the
    /// change to the entity on this device. A record that holds an entity change already (an edit after
    /// submission) keeps it and applies its `saveTo` fields again. Nothing happens when the form declares no
    /// entity, or when neither its create nor its update condition holds.
    static func applyEntityDeclaration(
        _ db: Database, form: FormDefinition, logic: FormLogic, record: StoredRecord, metadata: RecordMetadata, clock: HybridTimestamp,
        device: String, presentation: String?
    ) throws {
        guard let declaration = form.entity else { return }
        let recordKey = record.id.lowercased
        let answers = record.answers
        var change: RecordEntityChange
        if let existing = answers[RecordEntityChange.fieldID], let stored = try? RecordEntityChange(answer: existing) {
            change = stored
        } else {
            let state = FormState(logic: logic, answers: answers, metadata: metadata, entities: TransactionEntityLookup(db: db))
            func value(_ source: String?) -> ExpressionValue? {
                guard let source, let expression = try? FormExpression.parse(source) else { return nil }
                return state.evaluate(expression, at: "")
            }
            func holds(_ source: String?) -> Bool { source == nil || (value(source)?.isTruthy ?? false) }
            let label = text(value(declaration.label))
            let named = text(value(declaration.entityID)).flatMap(UUID.init(text:))
            if declaration.updates, let named, declaration.updateIf == nil || holds(declaration.updateIf),
               try entityRow(db, list: declaration.list, id: named.lowercased) != nil {
                let revision = try Int64.fetchOne(db, sql: "SELECT revision FROM entities WHERE list = ? AND id = ?", arguments: [declaration.list, named.lowercased]) ?? 0
                change = RecordEntityChange(list: declaration.list, entityID: named, action: .update, baseRevision: revision, label: label)
            } else if declaration.creates, declaration.entityID == nil ? holds(declaration.createIf) : (declaration.createIf != nil && holds(declaration.createIf)) {
                change = RecordEntityChange(list: declaration.list, entityID: record.id, action: .create, baseRevision: 0, label: label)
            } else {
                return
            }
            let json = answerJSON(change.answer)
            try setEdit(db, record: recordKey, key: RecordEntityChange.fieldID, json: json)
            let base = try editBase(db, record: recordKey, field: RecordEntityChange.fieldID, serverRevision: record.serverRevision)
            try db.execute(sql: """
                INSERT INTO outbox (record_id, presentation_id, kind, field_id, value, base_revision, hlc, created_at)
                VALUES (?1, ?2, 'set', ?3, fs_seal(?4, 'outbox', ?1, ?3), ?5, ?6, ?7)
                """, arguments: [recordKey, presentation, RecordEntityChange.fieldID, json, base, clock.rawValue, nowMillis()])
            let entityKey = change.entityID.lowercased
            if change.action == .create {
                try storeLocalChange(db, list: change.list, entity: entityKey, property: "", record: recordKey, value: nil, hlc: clock, writer: device)
            }
            if let label = change.label {
                try storeLocalChange(db, list: change.list, entity: entityKey, property: StoredEntityKeys.label, record: recordKey, value: answerJSON(.text(label)), hlc: clock, writer: device)
            }
        }
        // Each saveTo field with the stamp the server will give it: the newest clock of the record's unsent rows
        // that touch it (what the push sends), else the synced field's own.
        let entityKey = change.entityID.lowercased
        for field in form.allFields {
            guard let property = field.saveTo else { continue }
            let pendingClock = try Int64.fetchOne(db.cachedStatement(sql: """
                SELECT max(hlc) FROM outbox WHERE record_id = ?1 AND (field_id = ?2 OR (field_id IS NULL AND kind = 'create' AND json_type(fs_open(value, 'outbox', record_id, ''), ?3) IS NOT NULL))
                """), arguments: [recordKey, field.id, "$.\"\(field.id)\""])
            let stamp: (HybridTimestamp, String)
            if let pendingClock {
                stamp = (HybridTimestamp(rawValue: pendingClock), device)
            } else if let synced = record.synced[field.id] {
                stamp = (synced.hlc, synced.clientID)
            } else {
                continue
            }
            try storeLocalChange(
                db, list: change.list, entity: entityKey, property: property, record: recordKey, value: answers[field.id].map(answerJSON), hlc: stamp.0, writer: stamp.1)
        }
    }

    /// Keeps one property's local change, unless one with a newer stamp is kept already.
    static func storeLocalChange(
        _ db: Database, list: String, entity: String, property: String, record: String, value: String?, hlc: HybridTimestamp, writer: String
    ) throws {
        try db.cachedStatement(sql: """
            INSERT INTO entity_local_changes (list, entity_id, property, record_id, value, hlc, writer) VALUES (?1, ?2, ?3, ?4, fs_seal(?5, 'entity-change', ?1, ?2, ?3), ?6, ?7)
            ON CONFLICT (list, entity_id, property) DO UPDATE SET record_id = excluded.record_id, value = excluded.value, hlc = excluded.hlc,
                writer = excluded.writer
            WHERE (excluded.hlc, excluded.writer) >= (entity_local_changes.hlc, entity_local_changes.writer)
            """).execute(arguments: [list, entity, property, record, value, hlc.rawValue, writer])
    }
}


import Foundation
import FormModel
import GRDB
internal import SyncCore

extension FormSession {
    /// The completion button ("Create", "Add", "Submit"): validates the whole form as stored; when
    /// valid the record becomes submitted and is queued for sync, all in one transaction, and the
    /// presentation ends. When not, nothing changes and the presentation stays open.
    public func complete() async throws -> CompletionResult {
        try requireOpen()
        let (validator, record, presentation, title, form, metadata) = (validator, recordKey, presentationKey, form.title, form, metadata)
        let editing = mode == .editSubmitted
        let opened = openedAnswers
        let (result, stored) = try await store.write(doing: "completing record \(record)") { db -> (CompletionResult, [String: AnswerValue]) in
            try DraftStore.requirePresentation(db, presentation, record: record)
            guard let current = try DraftStore.fetchRecord(db, id: UUID(text: record)!) else {
                throw DraftStoreError(.unknownRecord, "Record \(record) is no longer on this device.")
            }
            let answers = current.answers
            let changes = PresentationChanges(formTitle: title, opened: opened, current: answers)
            // Checked against the entity lists as this transaction sees them (an entity choice must be one of its
            // list's), except a fix of a submitted record: its entity may have left the device since (reassigned).
            let lookup: (any EntityLookup)? = editing ? nil : TransactionEntityLookup(db: db)
            let evaluated = FormState(logic: validator.logic, answers: answers, metadata: metadata, entities: lookup)
            switch DismissalPolicy.decide(.complete, changes: changes, validation: validator.validate(evaluated)) {
            case .stay(let report):
                return (.invalid(report), answers)
            default:
                let (clock, device) = try DraftStore.tick(db)
                let now = DraftStore.nowMillis()
                // What the record does to its entity, decided now and applied here in this transaction.
                try DraftStore.applyEntityDeclaration(
                    db, form: form, logic: validator.logic, record: current, metadata: metadata, clock: clock, device: device, presentation: presentation)
                try db.execute(sql: "UPDATE records SET state = 'submitted', updated_at = ?1, submitted_at = ?1 WHERE id = ?2", arguments: [now, record])
                try db.execute(
                    sql: "INSERT INTO outbox (record_id, presentation_id, kind, base_revision, hlc, created_at) VALUES (?, ?, 'submit', ?, ?, ?)",
                    arguments: [record, presentation, current.serverRevision, clock.rawValue, now])
                try db.execute(sql: "DELETE FROM presentations WHERE id = ?", arguments: [presentation])
                return (.submitted, try DraftStore.fetchRecord(db, id: current.id)?.answers ?? answers)
            }
        }
        let language = state.language
        state = FormState(logic: validator.logic, answers: stored, metadata: metadata, entities: store)
        state.language = language
        if result == .submitted { isOpen = false }
        return result
    }

    /// The Cancel button. With nothing typed in this presentation the sheet closes at once (`.closed`;
    /// a new record that was never typed into disappears). With content typed, nothing is thrown away
    /// yet: show the returned confirmation and call `discardChanges()`, `dismiss(reason: .cancel)` or
    /// carry on editing, or pass the person's choice to `resolve(_:)`.
    public func cancel() async throws -> CancelResult {
        try requireOpen()
        switch DismissalPolicy.decide(.cancel, changes: changes, validation: ValidationReport()) {
        case .confirm(let confirmation):
            return .needsConfirmation(confirmation)
        default:
            _ = try await revert()
            return .closed
        }
    }

    /// Discard Changes (destructive): reverts the edits of this presentation only. A brand-new record
    /// disappears; a resumed draft or an edited submission returns to what it was when the sheet opened.
    /// The presentation ends.
    @discardableResult
    public func discardChanges() async throws -> DiscardResult {
        try requireOpen()
        return try await revert()
    }

    /// Every way out but the completion button and a confirmed discard — Esc, a click outside, another
    /// popover, Ctrl-C, SIGTERM, SIGHUP, end of input, or Save Draft (`.cancel`): keeps everything; the
    /// record stays a draft (or keeps its edits), ready to resume. The presentation ends. A brand-new
    /// record in which nothing was typed is removed instead: there is nothing to keep.
    /// - Throws: `invalidDismissal` for `.complete` (use `complete()`).
    public func dismiss(reason: DismissalTrigger) async throws {
        try requireOpen()
        if reason == .complete {
            throw DraftStoreError(.invalidDismissal, "Completing a form is not a dismissal; call complete(), which validates the form first.")
        }
        // Nothing typed, nothing kept: a brand-new record that was never typed into leaves no empty draft.
        if mode == .newRecord, !changes.hasUserContent {
            _ = try await revert()
            return
        }
        // DismissalPolicy keeps everything for every trigger but completion and cancel; Cancel reaching
        // here is the confirmation's Save Draft, which keeps everything too.
        try await store.endPresentation(presentationKey)
        isOpen = false
    }

    /// Applies the person's answer to the discard confirmation: Discard Changes, Save Draft, or
    /// Keep Editing (returns nil, the presentation stays open).
    public func resolve(_ choice: ConfirmationChoice) async throws -> DismissalOutcome? {
        let outcome = DismissalPolicy.resolve(choice)
        switch outcome {
        case .discard?: try await discardChanges()
        case .keep(let trigger)?: try await dismiss(reason: trigger)
        default: break
        }
        return outcome
    }

    private func revert() async throws -> DiscardResult {
        let (record, presentation) = (recordKey, presentationKey)
        let directory = store.blobDirectory
        let result = try await store.write(doing: "discarding the changes to record \(record)") { db in
            let result = try DraftStore.revertPresentation(db, presentation, record: record)
            // Files this presentation attached that nothing refers to any more go with its edits.
            _ = try DraftStore.collectGarbage(db, directory: directory, only: presentation)
            return result
        }
        let language = state.language
        state = FormState(logic: validator.logic, answers: openedAnswers, metadata: metadata, entities: store)
        state.language = language
        isOpen = false
        return result
    }
}

extension DraftStore {
    static func requirePresentation(_ db: Database, _ presentation: String, record: String) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM presentations WHERE id = ?", arguments: [presentation]) == true else {
            throw DraftStoreError(.presentationEnded, "The sheet for record \(record) was already closed; open the record again to go on.")
        }
    }

    /// Reverts one presentation from its snapshot, in the caller's transaction.
    static func revertPresentation(_ db: Database, _ presentation: String, record: String) throws -> DiscardResult {
        guard let snapshot = try Row.fetchOne(db, sql: """
            SELECT kind, snapshot_state, snapshot_updated_at, fs_open(snapshot_fields, 'snapshot', id, record_id) AS snapshot_fields FROM presentations WHERE id = ?
            """, arguments: [presentation])
        else {
            throw DraftStoreError(.presentationEnded, "The sheet for record \(record) was already closed; nothing was discarded.")
        }
        guard let current = try fetchRecord(db, id: UUID(text: record)!) else {
            throw DraftStoreError(.unknownRecord, "Record \(record) is no longer on this device.")
        }
        let kind: String = snapshot["kind"]
        if kind == "new" {
            if current.serverRevision == 0 {
                // Never seen by the server: the record and its unsent changes simply disappear.
                try db.execute(sql: "DELETE FROM outbox WHERE record_id = ?", arguments: [record])
                try db.execute(sql: "DELETE FROM conflicts WHERE record_id = ?", arguments: [record])
                try db.execute(sql: "DELETE FROM records WHERE id = ?", arguments: [record])
            } else {
                let (clock, _) = try tick(db)
                let now = nowMillis()
                try db.execute(sql: "DELETE FROM presentations WHERE id = ?", arguments: [presentation])
                try db.execute(sql: "UPDATE records SET state = 'deleted', updated_at = ? WHERE id = ?", arguments: [now, record])
                try clearEdits(db, record: record)
                try db.execute(
                    sql: "INSERT INTO outbox (record_id, kind, base_revision, hlc, created_at) VALUES (?, 'delete', ?, ?, ?)",
                    arguments: [record, current.serverRevision, clock.rawValue, now])
            }
            return .removedNewRecord
        }
        let opened = try snapshotAnswers(snapshot["snapshot_fields"], record: record)
        let answers = current.answers
        var local = current.pending
        var reverted = Set<String>()
        let (clock, _) = try tick(db)
        let now = nowMillis()
        for id in Set(opened.keys).union(answers.keys) where opened[id] != answers[id] {
            reverted.insert(id)
            // The value goes back as an edit on top; the synced fields stay as the latest pull left them.
            local[id] = .some(opened[id])
        }
        // This presentation's unsent edits are dropped; a record the server already knows also gets
        // the reverted values queued, in case some of those edits had reached it, on the base those edits had.
        var bases: [String: Int64] = [:]
        for id in reverted {
            bases[id] = try editBase(db, record: record, field: id, serverRevision: current.serverRevision)
        }
        try db.execute(sql: "DELETE FROM outbox WHERE presentation_id = ? AND kind = 'set'", arguments: [presentation])
        if current.serverRevision > 0 {
            for id in reverted.sorted() {
                let json = opened[id].map { answerJSON($0) }
                try db.execute(sql: """
                    INSERT INTO outbox (record_id, kind, field_id, value, base_revision, hlc, created_at)
                    VALUES (?1, 'set', ?2, fs_seal(?3, 'outbox', ?1, ?2), ?4, ?5, ?6)
                    """, arguments: [record, id, json, bases[id] ?? current.serverRevision, clock.rawValue, now])
            }
        }
        try db.execute(sql: "UPDATE records SET state = ?, updated_at = ? WHERE id = ?", arguments: [
            snapshot["snapshot_state"] as String, snapshot["snapshot_updated_at"] as Int64, record,
        ])
        for id in reverted {
            try setEdit(db, record: record, key: id, json: local[id].flatMap { $0 }.map(answerJSON))
        }
        try db.execute(sql: "DELETE FROM presentations WHERE id = ?", arguments: [presentation])
        return .reverted(fields: reverted)
    }
}

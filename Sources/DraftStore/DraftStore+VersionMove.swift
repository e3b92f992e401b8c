import Foundation
import FormModel
import GRDB
internal import SyncCore

/// Drafts across form versions: a draft opens on the newest version of its form the device holds.
///
/// The rule, applied inside the transaction that opens the draft:
/// 1. The draft's unsent edits were made on its version, so they go to the server as a change against that
///    version: they are frozen now, as the next push's mutation of the record (``freeze(_:record:upTo:reads:now:ids:cache:sensitive:)``).
/// 2. The record moves to the newest version. Each answer the new version takes in a draft
///    (``FormValidator/draftIssue(_:_:)``) is carried by its key; every other one (a field the version no longer
///    has, a field whose kind changed, a repeat it dropped) is cleared by an unsent edit, which goes to the
///    server as a change against the new version. The server's history keeps both changes, each with its version.
/// 3. The answers not carried over are handed to the sheet once (``FormVersionMove``).
///
/// A draft whose earlier changes are on their way to the server (a frozen mutation not yet answered) and which
/// has edits made since stays on its version for now: those edits could not go as a change against it. It moves
/// at an opening after the next sync. Submitted records never move.
extension DraftStore {
    /// Moves the draft `record` (on `form`) to `newest` in the caller's transaction; nil when it stays (see above).
    static func moveDraft(
        _ db: Database, record: String, from form: FormDefinition, to newest: FormDefinition, cache: FormCache
    ) throws -> FormVersionMove? {
        let frozenUpTo = try Int64.fetchOne(db.cachedStatement(sql: "SELECT last_outbox_id FROM sent_mutations WHERE record_id = ?"), arguments: [record])
        let lastUnsent = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(mutation_id) FROM outbox WHERE record_id = ? AND mutation_id > ?"),
                                            arguments: [record, frozenUpTo ?? 0])
        if let lastUnsent {
            guard frozenUpTo == nil else { return nil }
            var sensitive: [FormKey: Set<String>] = [:]
            var ids = MutationIDs(count: 1)
            _ = try freeze(db, record: record, upTo: lastUnsent, now: nowMillis(), ids: &ids, cache: cache, sensitive: &sensitive)
        }
        let answers = try Self.answers(try fetchStoredAnswers(db, record: record), record: record)
        let target = FormValidator(form: newest)
        let dropped = answers.keys.filter { target.draftIssue($0, answers[$0]) != nil }.sorted()
        try db.cachedStatement(sql: "UPDATE records SET form_version = ? WHERE id = ?").execute(arguments: [newest.version, record])
        guard !dropped.isEmpty else { return FormVersionMove(formID: form.id, from: form.version, to: newest.version, dropped: []) }

        let (clock, _) = try tick(db)
        let now = nowMillis()
        let serverRevision = try Int64.fetchOne(db.cachedStatement(sql: "SELECT server_revision FROM records WHERE id = ?"), arguments: [record]) ?? 0
        for key in dropped {
            try setEdit(db, record: record, key: key, json: nil)
            let base = try editBase(db, record: record, field: key, serverRevision: serverRevision)
            try db.cachedStatement(sql: """
                INSERT INTO outbox (record_id, kind, form_id, form_version, field_id, value, base_revision, hlc, created_at)
                VALUES (?1, 'set', ?2, ?3, ?4, NULL, ?5, ?6, ?7)
                """).execute(arguments: [record, newest.id, newest.version, key, base, clock.rawValue, now])
        }
        // What a person answered, named as the old version names it; an instance's own bookkeeping, the record's
        // entity change and kept calculations are not answers a person gave.
        let old = FormValidator(form: form)
        let state = FormState(logic: old.logic, answers: answers)
        let shown = dropped.compactMap { key -> FormVersionMove.DroppedAnswer? in
            guard let value = answers[key], let path = AnswerKey(key), !path.isInstanceMeta, let field = old.field(forKey: key), field.isEditable else { return nil }
            return FormVersionMove.DroppedAnswer(key: key, label: state.describe(key), value: value, display: value.display(for: field))
        }
        return FormVersionMove(formID: form.id, from: form.version, to: newest.version, dropped: shown)
    }
}

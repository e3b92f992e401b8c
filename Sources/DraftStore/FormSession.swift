import Foundation
import FormModel
import GRDB
internal import SyncCore

/// One presentation of a form: the integrator's API between a sheet on screen and the device database.
///
/// Open one with `DraftStore.newRecord(formID:)`, `resumeDraft(_:)` or `editSubmitted(_:)`. Every
/// `set` is durable (committed with the WAL synced) before it returns, together with its outbox entry.
/// End it exactly one way, as the dismissal table (README, "Presentation and dismissal") says:
/// - `complete()` — the completion button; submits when valid, otherwise stays open with the issues;
/// - `cancel()` — the Cancel button; closes at once when nothing was typed here, otherwise asks for
///   confirmation, answered by `discardChanges()`, `dismiss(reason: .cancel)` (Save Draft) or going on editing;
/// - `dismiss(reason:)` — every other way out (Esc, a click outside, Ctrl-C, SIGTERM…): keeps everything.
///
/// When the process dies with a session open, the next `DraftStore` open treats it as a `processKilled`
/// dismissal: everything typed is kept. A session that is released without being ended is dismissed the same way.
public actor FormSession {
    /// How the presentation was opened.
    public enum Mode: String, Sendable, Hashable {
        /// A brand-new record; discarding removes it.
        case newRecord
        /// An existing draft; discarding returns it to how it was when the sheet opened.
        case resumeDraft
        /// A submitted record whose form allows editing after submission.
        case editSubmitted
    }

    /// The store the presentation saves into.
    public nonisolated let store: DraftStore
    /// The form version the sheet shows: the one the record was started on, or the newer one a draft moved to
    /// as it opened (``versionMove``).
    public nonisolated let form: FormDefinition
    /// The record this presentation shows.
    public nonisolated let recordID: UUID
    /// Identifies this presentation (and its snapshot) in the database.
    public nonisolated let presentationID: UUID
    /// How the sheet was opened: a new record, a resumed draft or an edit of a submitted record.
    public nonisolated let mode: Mode
    /// The answers when the sheet opened (defaults for a new record); Cancel returns to these.
    public nonisolated let openedAnswers: [String: AnswerValue]
    /// What the form's expressions and texts read as `record.start`, `record.device`: when the record was
    /// created, on this device.
    public nonisolated let metadata: RecordMetadata
    /// The language the sheet opened in (the device's, when the form is written in it); nil for the default.
    public nonisolated let openedLanguage: String?
    /// Set when this opening moved the draft to a newer version of its form: the versions, and the answers the
    /// new version has no field for, which the sheet shows once (they stay in the record's history). Nil for
    /// every other opening, the later openings of a moved draft included.
    public nonisolated let versionMove: FormVersionMove?
    nonisolated let validator: FormValidator
    nonisolated let recordKey: String
    nonisolated let presentationKey: String

    /// The current answers, as stored (fields of repeat instances under their keys, `defects/<id>/severity`).
    public var answers: [String: AnswerValue] { state.answers }
    /// The answers evaluated: relevance, computed values, repeat instances; updated by each edit for what
    /// depends on it only.
    public internal(set) var state: FormState
    /// Whether the presentation is still open (false once completed, discarded or dismissed).
    public internal(set) var isOpen = true
    /// The language the sheet shows its texts in: one of the form's `languages`, nil for its default.
    public var language: String? { state.language }

    init(store: DraftStore, form: FormDefinition, recordID: UUID, presentationID: UUID, mode: Mode, answers: [String: AnswerValue],
         metadata: RecordMetadata, language: String? = nil, versionMove: FormVersionMove? = nil) {
        self.store = store
        self.form = form
        self.recordID = recordID
        self.presentationID = presentationID
        self.mode = mode
        self.openedAnswers = answers
        self.versionMove = versionMove
        self.validator = FormValidator(form: form)
        self.metadata = metadata
        self.state = FormState(logic: validator.logic, answers: answers, metadata: metadata, entities: store)
        self.openedLanguage = language.flatMap { form.language(named: $0) }
        self.state.language = openedLanguage
        self.recordKey = recordID.lowercased
        self.presentationKey = presentationID.lowercased
    }

    deinit {
        // Released while still open: a non-cancel dismissal, like a killed process. Keep everything.
        if isOpen {
            let store = store
            let key = presentationKey
            Task { try? await store.endPresentation(key) }
        }
    }

    /// Shows the sheet's texts in the form's language `name` (`fr`, `Français`, `Français (fr)`; see
    /// `FormDefinition.language(named:)`), or in its default for nil or a language the form is not written
    /// in. Only what is shown changes: answers, drafts and what is saved stay as they are.
    /// - Returns: the language now shown (nil: the default).
    @discardableResult
    public func setLanguage(_ name: String?) -> String? {
        state.language = name.flatMap { form.language(named: $0) }
        return state.language
    }

    // MARK: - State

    /// The whole form's validation for the current answers (only relevant fields are checked).
    public var validation: ValidationReport { validator.validate(state) }

    /// The top-level fields shown for the current answers, in form order (a repeat's fields are per instance:
    /// see `instances(of:in:)` and `isRelevant(_:)`).
    public var relevantFields: [FieldDefinition] {
        form.allFields.filter { state.isRelevant($0.id) }
    }

    /// Whether the field at `key` is shown for the current answers.
    public func isRelevant(_ key: String) -> Bool { state.isRelevant(key) }

    /// What this presentation changed compared with when it opened.
    public var changes: PresentationChanges {
        PresentationChanges(formTitle: form.title, opened: openedAnswers, current: answers, isNewRecord: mode == .newRecord)
    }

    // MARK: - Editing

    /// Stores `value` (nil clears the field) and returns once it is durable, with its outbox entry
    /// written in the same transaction. Raw input (`.raw`) is kept as typed and reported by validation.
    /// - Returns: the field's issues with the new answer (empty when acceptable or not relevant).
    /// - Throws: `unknownField`, `readOnlyField`, `wrongType`, `presentationEnded`, or a storage error
    ///   (`storageFull`…) after which the previous value is still stored.
    @discardableResult
    public func set(_ key: String, to value: AnswerValue?) async throws -> [FieldIssue] {
        try requireOpen()
        let field = try self.field(key)
        if let value, !value.fits(field.kind) {
            throw DraftStoreError(.wrongType,
                "The field \"\(key)\" (\(field.label)) cannot take a \(value.tag) answer (\"\(value.display())\"): \(FieldValidator.formatMessage(for: field)) Nothing was saved for it.")
        }
        guard answers[key] != value else { return validator.validate(field: key, in: state) }
        var edits = [DraftStore.Edit(field: key, label: field.label.text, value: value)]
        edits += restorations(for: key)
        try await write(edits)
        return validator.validate(field: key, in: state)
    }

    /// Parses what a person typed for `key` (`AnswerValue.parse`: choices by value, label or
    /// number; invalid text kept as `.raw`) and stores it; empty input clears the field.
    @discardableResult
    public func set(_ key: String, input: String) async throws -> [FieldIssue] {
        let field = try self.field(key)
        return try await set(key, to: AnswerValue.parse(input, for: field))
    }

    /// Writes `edits` durably, then updates the answers and what depends on them.
    func write(_ edits: [DraftStore.Edit]) async throws {
        if edits.count == 1, let edit = edits.first {
            try await store.writeEdit(record: recordKey, presentation: presentationKey, field: edit.field, label: edit.label, value: edit.value)
        } else if !edits.isEmpty {
            try await store.writeEdits(record: recordKey, presentation: presentationKey, edits)
        }
        state.apply(Dictionary(edits.map { ($0.field, $0.value) }, uniquingKeysWith: { _, last in last }))
        try await storeKeptValues()
    }

    /// Stores the values of kept calculations (they call once() or uuid()) computed for the first time, so they
    /// are never computed again, here, on the server or in an export.
    func storeKeptValues() async throws {
        let kept = state.valuesToKeep
        guard !kept.isEmpty else { return }
        let edits = kept.sorted { $0.key < $1.key }.map { DraftStore.Edit(field: $0.key, label: validator.field(forKey: $0.key)?.label.text ?? $0.key, value: $0.value) }
        try await store.writeEdits(record: recordKey, presentation: presentationKey, edits)
        state.apply(kept)
    }

    /// The field a person may type at `key` (`site`, `defects/<id>/severity`), in an instance the record has.
    func field(_ key: String) throws -> FieldDefinition {
        guard let path = AnswerKey(key), !path.isInstanceMeta, let field = validator.field(forKey: key) else {
            if let path = AnswerKey(key), !path.steps.isEmpty, validator.field(path.field) != nil {
                throw DraftStoreError(.unknownField, "\"\(key)\" does not follow the repeats of form \(form.id): \"\(path.field)\" lives in \(validator.logic.fields.repeatChain(path.field).map { "\"\($0)\"" }.joined(separator: " inside ")).")
            }
            let names = form.everyField.filter(\.isEditable).map(\.id).joined(separator: ", ")
            throw DraftStoreError(.unknownField, "The form \(form.id) has no field \"\(key)\". Its fields are: \(names).")
        }
        guard field.isEditable else {
            let why = field.isComputed ? "is computed from other answers" : field.kind == .repeat ? "is a repeat; add instances and answer their fields" : "is a note"
            throw DraftStoreError(.readOnlyField, "The field \"\(key)\" of form \(form.id) \(why); it takes no answer.")
        }
        var prefix = ""
        for step in path.steps {
            guard let instance = state.instances.all(step.group, in: prefix).first(where: { $0.id == step.instance }) else {
                throw DraftStoreError(.unknownInstance, "Record \(recordKey) has no \(step.group) instance \(step.instance); add one first.")
            }
            prefix = instance.prefix
        }
        return field
    }

    func requireOpen() throws {
        guard isOpen else {
            throw DraftStoreError(.presentationEnded, "This sheet for record \(recordKey) has already been closed; open the record again to go on.")
        }
    }
}

extension DraftStore {
    /// One edit and its outbox entry, in one transaction.
    func writeEdit(record: String, presentation: String, field: String, label: String, value: AnswerValue?) async throws {
        let json = value.map { Self.answerJSON($0) }
        try await write(doing: "saving the field \"\(field)\" (\(label)) of record \(record)") { db in
            let (clock, _) = try Self.tick(db)
            let now = Self.nowMillis()
            // The edit goes on top of the synced fields, as an unsent edit; the outbox row queues it.
            let update = try db.cachedStatement(sql: """
                UPDATE records SET updated_at = ? WHERE id = ? AND state != 'deleted' RETURNING server_revision
                """)
            guard let serverRevision = try Int64.fetchOne(update, arguments: [now, record]) else {
                throw DraftStoreError(.unknownRecord, "Record \(record) is no longer on this device (deleted elsewhere); the edit to \"\(field)\" was not saved.")
            }
            try Self.setEdit(db, record: record, key: field, json: json)
            let baseRevision = try Self.editBase(db, record: record, field: field, serverRevision: serverRevision)
            try db.cachedStatement(sql: """
                INSERT INTO outbox (record_id, presentation_id, kind, field_id, value, base_revision, hlc, created_at)
                VALUES (?1, ?2, 'set', ?3, fs_seal(?4, 'outbox', ?1, ?3), ?5, ?6, ?7)
                """).execute(arguments: [record, presentation, field, json, baseRevision, clock.rawValue, now])
        }
        checkpointer.noteCommit()
    }

    /// An answer as stored and sent: its tagged JSON.
    static func answerJSON(_ value: AnswerValue) -> String {
        var writer = JSONWriter(capacity: 32)
        value.write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Ends a presentation keeping everything (a non-cancel dismissal).
    func endPresentation(_ presentation: String) async throws {
        try await write(doing: "closing a sheet") { db in
            try db.execute(sql: "DELETE FROM presentations WHERE id = ?", arguments: [presentation])
        }
    }
}

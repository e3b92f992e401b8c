import Foundation
import FormModel
import GRDB
import SyncCore

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

    public nonisolated let store: DraftStore
    /// The form version the record was started on.
    public nonisolated let form: FormDefinition
    public nonisolated let recordID: UUID
    /// Identifies this presentation (and its snapshot) in the database.
    public nonisolated let presentationID: UUID
    public nonisolated let mode: Mode
    /// The answers when the sheet opened (defaults for a new record); Cancel returns to these.
    public nonisolated let openedAnswers: [String: AnswerValue]
    nonisolated let validator: FormValidator
    nonisolated let recordKey: String
    nonisolated let presentationKey: String

    /// The current answers, as stored.
    public internal(set) var answers: [String: AnswerValue]
    /// Whether the presentation is still open (false once completed, discarded or dismissed).
    public internal(set) var isOpen = true

    init(store: DraftStore, form: FormDefinition, recordID: UUID, presentationID: UUID, mode: Mode, answers: [String: AnswerValue]) {
        self.store = store
        self.form = form
        self.recordID = recordID
        self.presentationID = presentationID
        self.mode = mode
        self.openedAnswers = answers
        self.answers = answers
        self.validator = FormValidator(form: form)
        self.recordKey = recordID.uuidString.lowercased()
        self.presentationKey = presentationID.uuidString.lowercased()
    }

    deinit {
        // Released while still open: a non-cancel dismissal, like a killed process. Keep everything.
        if isOpen {
            let store = store
            let key = presentationKey
            Task { try? await store.endPresentation(key) }
        }
    }

    // MARK: - State

    /// The whole form's validation for the current answers (only relevant fields are checked).
    public var validation: ValidationReport { validator.validate(answers) }

    /// The fields shown for the current answers, in form order.
    public var relevantFields: [FieldDefinition] {
        let relevant = validator.relevance.relevantFields(for: answers)
        return form.allFields.filter { relevant.contains($0.id) }
    }

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
    public func set(_ fieldID: String, to value: AnswerValue?) async throws -> [FieldIssue] {
        try requireOpen()
        let field = try self.field(fieldID)
        if let value, !value.fits(field.kind) {
            throw DraftStoreError(.wrongType,
                "The field \"\(field.id)\" (\(field.label)) cannot take a \(value.tag) answer (\"\(value.display())\"): \(FieldValidator.formatMessage(for: field)) Nothing was saved for it.")
        }
        guard answers[fieldID] != value else { return validator.validate(field: fieldID, in: answers) }
        let previous = answers[fieldID]
        answers[fieldID] = value
        do {
            try await store.writeEdit(record: recordKey, presentation: presentationKey, field: fieldID, label: field.label, value: value)
        } catch {
            if answers[fieldID] == value { answers[fieldID] = previous }
            throw error
        }
        return validator.validate(field: fieldID, in: answers)
    }

    /// Parses what a person typed for `fieldID` (`AnswerValue.parse`: choices by value, label or
    /// number; invalid text kept as `.raw`) and stores it; empty input clears the field.
    @discardableResult
    public func set(_ fieldID: String, input: String) async throws -> [FieldIssue] {
        let field = try self.field(fieldID)
        return try await set(fieldID, to: AnswerValue.parse(input, for: field))
    }

    func field(_ id: String) throws -> FieldDefinition {
        guard let field = validator.field(id) else {
            let names = form.allFields.filter(\.kind.takesAnswer).map(\.id).joined(separator: ", ")
            throw DraftStoreError(.unknownField, "The form \(form.id) has no field \"\(id)\". Its fields are: \(names).")
        }
        guard field.kind.takesAnswer else {
            throw DraftStoreError(.readOnlyField, "The field \"\(id)\" of form \(form.id) is a note; it takes no answer.")
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
        let path = "$.\"\(field)\""
        try await write(doing: "saving the field \"\(field)\" (\(label)) of record \(record)") { db in
            let (clock, _) = try Self.tick(db)
            let now = Self.nowMillis()
            // The edit goes on top of the synced fields, as an unsent edit; the outbox row queues it.
            let update = try db.cachedStatement(sql: """
                UPDATE records SET local = json_set(local, ?, json(?)), updated_at = ?
                WHERE id = ? AND state != 'deleted'
                RETURNING server_revision
                """)
            guard let serverRevision = try Int64.fetchOne(update, arguments: [path, json, now, record]) else {
                throw DraftStoreError(.unknownRecord, "Record \(record) is no longer on this device (deleted elsewhere); the edit to \"\(field)\" was not saved.")
            }
            let baseRevision = try Self.editBase(db, record: record, field: field, serverRevision: serverRevision)
            try db.cachedStatement(sql: """
                INSERT INTO outbox (record_id, presentation_id, kind, field_id, value, base_revision, hlc, created_at)
                VALUES (?, ?, 'set', ?, ?, ?, ?, ?)
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

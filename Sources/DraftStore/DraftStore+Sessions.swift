import Foundation
import FormModel
import GRDB
internal import SyncCore

extension DraftStore {
    /// Opens a sheet for a brand-new record of `formID` (its newest version unless `version` is given).
    /// The record (with the form's defaults), its outbox entry and the presentation's snapshot are
    /// written in one transaction before this returns.
    public func newRecord(formID: String, version: Int? = nil) async throws -> FormSession {
        let form = try await form(id: formID, version: version)
        let recordID = UUID()
        let presentationID = UUID()
        let defaults = FormValidator(form: form).defaults
        let (record, presentation) = (recordID.lowercased, presentationID.lowercased)
        let created = try await openingWrite(doing: "creating a record of form \(form.id)") { db -> Int64 in
            let (clock, _) = try Self.tick(db)
            let now = Self.nowMillis()
            // Nothing synced yet; the defaults are the record's first unsent edits.
            let answersJSON = fieldValuesJSON(defaults.mapValues { .some($0) })
            try db.execute(sql: """
                INSERT INTO records (id, form_id, form_version, state, created_at, updated_at, fields)
                VALUES (?, ?, ?, 'draft', ?, ?, ?)
                """, arguments: [record, form.id, form.version, now, now, Self.emptyFields])
            for (field, value) in defaults {
                try Self.setEdit(db, record: record, key: field, json: Self.answerJSON(value))
            }
            try db.execute(sql: """
                INSERT INTO outbox (record_id, presentation_id, kind, form_id, form_version, value, base_revision, hlc, created_at)
                VALUES (?1, ?2, 'create', ?3, ?4, fs_seal(?5, 'outbox', ?1, ''), 0, ?6, ?7)
                """, arguments: [record, presentation, form.id, form.version, answersJSON, clock.rawValue, now])
            try Self.insertPresentation(db, presentation, record: record, kind: "new", now: now, stored: (Self.emptyFields, answersJSON))
            return now
        }
        return FormSession(store: self, form: form, recordID: recordID, presentationID: presentationID, mode: .newRecord, answers: defaults,
                           metadata: metadata(createdMillis: created), language: try await preferredLanguage())
    }

    /// Opens a sheet on an existing draft. Cancel with Discard returns it to how it is now.
    ///
    /// A draft of an older version of its form than the newest the device holds opens on the newest one, its
    /// answers carried by field id; the answers that version has no field for are in the session's
    /// ``FormSession/versionMove``, for the sheet to show once (<doc:DraftsAcrossVersions>).
    /// - Throws: `unknownRecord`, `notADraft` (a submitted record opens with `editSubmitted`), `recordInUse`.
    public func resumeDraft(_ id: UUID) async throws -> FormSession {
        try await openExisting(id, mode: .resumeDraft)
    }

    /// Opens a sheet on a submitted record, when its form allows editing after submission.
    /// Cancel with Discard returns it to how it is now.
    /// - Throws: `unknownRecord`, `notEditable`, `recordInUse`; `notADraft`'s opposite for drafts (use `resumeDraft`).
    public func editSubmitted(_ id: UUID) async throws -> FormSession {
        try await openExisting(id, mode: .editSubmitted)
    }

    private func openExisting(_ id: UUID, mode: FormSession.Mode) async throws -> FormSession {
        let key = id.lowercased
        let presentationID = UUID()
        let presentation = presentationID.lowercased
        let cache = formCache
        // One transaction: check the record and its form, take over a presentation left by a dead
        // process, and write the snapshot of exactly what the record is now.
        let (form, answers, created, move) = try await openingWrite(doing: "opening record \(key)") { db -> (FormDefinition, [String: AnswerValue], Int64, FormVersionMove?) in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT form_id, form_version, state, created_at FROM records WHERE id = ?"), arguments: [key]),
                let state = RecordState(rawValue: row["state"]), state != .deleted
            else {
                throw DraftStoreError(.unknownRecord, "There is no record \(key) on this device. List records with `fieldsheet records`.")
            }
            var form = try Self.loadForm(db, id: row["form_id"], version: row["form_version"], cache: cache)
            switch (mode, state) {
            case (.resumeDraft, .submitted):
                throw DraftStoreError(.notADraft,
                    "Record \(key) was already submitted; it is not a draft. \(form.editableAfterSubmit ? "Open it with `fieldsheet edit \(key)`." : "Its form (\(form.id)) does not allow editing after submission.")")
            case (.editSubmitted, .draft):
                throw DraftStoreError(.notEditable, "Record \(key) is a draft, not a submitted record; resume it with `fieldsheet resume \(key)`.")
            case (.editSubmitted, .submitted) where !form.editableAfterSubmit:
                throw DraftStoreError(.notEditable, "Record \(key) was submitted and its form \(form.id) does not allow editing after submission.")
            default:
                break
            }
            if let owner = try String.fetchOne(db.cachedStatement(sql: "SELECT owner FROM presentations WHERE record_id = ?"), arguments: [key]) {
                guard !ProcessIdentity.isAlive(owner) else {
                    throw DraftStoreError(.recordInUse,
                        "Record \(key) is open in another FieldSheet session (process \(owner.prefix { $0 != ":" })). Close it there first.")
                }
                // Left open by a process that died: a non-cancel dismissal, everything kept.
                try db.execute(sql: "DELETE FROM presentations WHERE record_id = ?", arguments: [key])
            }
            // A draft opens on the newest version of its form the device holds (DraftStore+VersionMove.swift).
            var move: FormVersionMove?
            if state == .draft, let newest = try Int.fetchOne(db.cachedStatement(sql: "SELECT max(version) FROM forms WHERE id = ?"), arguments: [form.id]), newest > form.version {
                let target = try Self.loadForm(db, id: form.id, version: newest, cache: cache)
                move = try Self.moveDraft(db, record: key, from: form, to: target, cache: cache)
                if move != nil { form = target }
            }
            // The record's fields and unsent edits are read once: the snapshot is made of them as read, and the
            // answers are read from them (a record of 5,000 repeat instances holds 10,000 unsent edits).
            let stored = try Self.fetchStoredAnswers(db, record: key)
            let answers = try Self.answers(stored, record: key)
            try Self.insertPresentation(db, presentation, record: key, kind: mode == .resumeDraft ? "resume" : "edit", now: Self.nowMillis(), stored: stored)
            // Attachments pulled with the record but not downloaded yet: the next sync fetches them (found in
            // the fields and edits just read, not opened again).
            _ = try Self.requestDownloads(db, record: key, stored: stored)
            return (form, answers, row["created_at"], move)
        }
        return FormSession(store: self, form: form, recordID: id, presentationID: presentationID, mode: mode, answers: answers,
                           metadata: metadata(createdMillis: created), language: try await preferredLanguage(), versionMove: move)
    }

    /// What a record's expressions read as `record.start`, `record.device`: when it was created, on this device.
    private func metadata(createdMillis: Int64) -> RecordMetadata {
        RecordMetadata(startedAt: Date(timeIntervalSince1970: Double(createdMillis) / 1000), device: deviceID)
    }

    /// A stored form version, from the cache or decoded from the database inside the caller's transaction.
    static func loadForm(_ db: Database, id: String, version: Int, cache: FormCache) throws -> FormDefinition {
        if let cached = cache.form(id: id, version: version) { return cached }
        guard let json = try String.fetchOne(db, sql: "SELECT definition FROM forms WHERE id = ? AND version = ?", arguments: [id, version]) else {
            throw DraftStoreError(.unknownForm, "The form \(id) version \(version) is not on this device. Import it with `fieldsheet forms import FILE`.")
        }
        do {
            let form = try JSONDecoder().decode(FormDefinition.self, from: Data(json.utf8))
            cache.insert(form)
            return form
        } catch {
            throw DraftStoreError(.databaseDamaged,
                "The stored definition of form \(id) cannot be read (\(error)). Import the form again with `fieldsheet forms import FILE`.")
        }
    }

    /// A transaction that opens a presentation, committed without waiting for the disk (`unsyncedWrite`).
    ///
    /// Safe because what it writes needs no durability of its own: a snapshot (and a brand-new record
    /// holding only defaults) lost to a power cut leaves no presentation to recover and nothing typed to
    /// lose, and the first edit's synchronous=FULL commit syncs the WAL up to and including these frames.
    /// Not waiting for the disk keeps opening a sheet well inside its 2 ms budget.
    func openingWrite<T: Sendable>(doing: String, _ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await unsyncedWrite(doing: doing, updates)
    }

    /// Stored fields of a record the server has never seen.
    static let emptyFields = #"{"values":{},"writers":[]}"#

    /// Writes a presentation's snapshot: the record as it is at this moment, its synced fields and its
    /// unsent edits (`{"fields": …, "local": …}`), from `stored` as the caller read them in this transaction
    /// (``fetchStoredAnswers(_:record:)``; both JSON, whose answers the caller has read).
    static func insertPresentation(_ db: Database, _ presentation: String, record: String, kind: String, now: Int64, stored: StoredAnswers) throws {
        try db.cachedStatement(sql: """
            INSERT INTO presentations (id, record_id, kind, owner, opened_at, snapshot_state, snapshot_updated_at, snapshot_fields)
            SELECT ?1, r.id, ?2, ?3, ?4, r.state, r.updated_at, fs_seal(?5, 'snapshot', ?1, r.id) FROM records r WHERE r.id = ?6
            """).execute(arguments: [presentation, kind, ProcessIdentity.current, now, #"{"fields":"# + stored.fields + #","local":"# + stored.local + "}", record])
    }

    /// The answers a presentation opened with, from its snapshot.
    static func snapshotAnswers(_ json: String, record: String) throws -> [String: AnswerValue] {
        do {
            var reader = JSONReader(Array(json.utf8))
            var synced = RecordFields()
            var local: FieldValues = [:]
            try reader.beginObject()
            while let key = try reader.nextKey() {
                switch key {
                case "fields": synced = try RecordFields(from: &reader)
                case "local": local = try reader.fieldValues()
                default: try reader.skipValue()
                }
            }
            return DeviceSync.answers(synced: synced, local: local)
        } catch {
            throw DraftStoreError(.databaseDamaged, "The opening snapshot of record \(record) cannot be read (\(error)).")
        }
    }

    /// Presentations now open on this database (by this or other processes), by record.
    public func openPresentations() async throws -> [UUID] {
        try await read(doing: "listing open sheets") { db in
            try String.fetchAll(db, sql: "SELECT record_id FROM presentations ORDER BY opened_at").compactMap(UUID.init(text:))
        }
    }
}

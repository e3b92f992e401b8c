import Foundation
import FormModel
import GRDB
internal import SyncCore

extension DraftStore {
    /// The record with `id`, with every field's value and metadata (or, with `answers: .topLevel`, those of the
    /// form's own fields only); nil when there is none.
    public func record(_ id: UUID, answers scope: RecordAnswers = .all) async throws -> StoredRecord? {
        try await read(doing: "reading record \(id.lowercased)") { db in
            try Self.fetchRecord(db, id: id, answers: scope)
        }
    }

    /// Records of any state but `deleted` (or only those in `state`), most recently changed first.
    public func records(state: RecordState? = nil) async throws -> [RecordSummary] {
        try await read(doing: "listing records") { db in
            var summaries: [RecordSummary] = []
            try Self.eachSummary(db, state: state) { summaries.append($0) }
            return summaries
        }
    }

    /// Calls `body` with each record summary in turn (same order as `records(state:)`) without holding
    /// them all in memory, for listings whose size must not grow with the number of records.
    public func forEachRecord(state: RecordState? = nil, _ body: @escaping @Sendable (RecordSummary) throws -> Void) async throws {
        try await read(doing: "listing records") { db in
            try Self.eachSummary(db, state: state, body)
        }
    }

    /// Deletes a draft: its own explicit action, never a side effect of dismissing a sheet.
    ///
    /// A draft the server has never seen disappears with its unsent changes; one the server knows
    /// becomes a tombstone and a deletion is queued for sync.
    /// - Throws: `unknownRecord`, `notADraft` (submitted records are not deleted this way) or
    ///   `recordInUse` when a running process has it open.
    public func deleteDraft(_ id: UUID) async throws {
        let key = id.lowercased
        try await write(doing: "deleting draft \(key)") { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT state, server_revision FROM records WHERE id = ?", arguments: [key]),
                let state = RecordState(rawValue: row["state"]), state != .deleted
            else {
                throw DraftStoreError(.unknownRecord, "There is no record \(key) on this device. List records with `fieldsheet records`.")
            }
            guard state == .draft else {
                throw DraftStoreError(.notADraft, "Record \(key) is \(state.rawValue), not a draft; only drafts can be deleted.")
            }
            if let owner = try String.fetchOne(db, sql: "SELECT owner FROM presentations WHERE record_id = ?", arguments: [key]) {
                guard !ProcessIdentity.isAlive(owner) else {
                    throw DraftStoreError(.recordInUse, "Draft \(key) is open in another FieldSheet session (process \(owner.prefix { $0 != ":" })). Close it there first.")
                }
            }
            let serverRevision: Int64 = row["server_revision"]
            if serverRevision == 0 {
                try db.execute(sql: "DELETE FROM outbox WHERE record_id = ?", arguments: [key])
                try db.execute(sql: "DELETE FROM conflicts WHERE record_id = ?", arguments: [key])
                try db.execute(sql: "DELETE FROM records WHERE id = ?", arguments: [key])
            } else {
                let now = Self.nowMillis()
                let (clock, _) = try Self.tick(db)
                try db.execute(sql: "DELETE FROM presentations WHERE record_id = ?", arguments: [key])
                try db.execute(sql: "UPDATE records SET state = 'deleted', updated_at = ? WHERE id = ?", arguments: [now, key])
                try Self.clearEdits(db, record: key)
                try db.execute(
                    sql: "INSERT INTO outbox (record_id, kind, base_revision, hlc, created_at) VALUES (?, 'delete', ?, ?, ?)",
                    arguments: [key, serverRevision, clock.rawValue, now])
            }
        }
    }

    /// How many unsent changes the outbox holds (for all records, or for one).
    public func outboxCount(record: UUID? = nil) async throws -> Int {
        try await read(doing: "counting unsent changes") { db in
            if let record {
                return try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox WHERE record_id = ?", arguments: [record.lowercased]) ?? 0
            }
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox") ?? 0
        }
    }

    // MARK: - Rows

    static func fetchRecord(_ db: Database, id: UUID, answers scope: RecordAnswers = .all) throws -> StoredRecord? {
        // Prepared once per connection: a push reads every record it sends and every one it settles.
        let sql = switch scope {
        case .all: """
            SELECT r.id, r.form_id, r.form_version, r.state, r.created_at, r.updated_at, r.submitted_at, r.server_revision, fs_open_fields(r.fields, 'record', r.id) AS fields,
                   \(localEditsJSON(of: "r.id")) AS local, r.missing_attachments, v.state AS review_state, v.comment AS review_comment
            FROM records r LEFT JOIN record_reviews v ON v.record_id = r.id WHERE r.id = ?
            """
        // The fields opened once (MATERIALIZED: not once per use), then only the top-level entries of their values
        // and stamps kept, in SQLite (a record of 5,000 repeat instances holds 30,000 of them), and only the
        // top-level unsent edits opened: the rows are read, not decoded.
        case .topLevel: """
            WITH f AS MATERIALIZED (SELECT r.rowid AS rowid, fs_open_fields(r.fields, 'record', r.id) AS j FROM records r WHERE r.id = ?1)
            SELECT r.id, r.form_id, r.form_version, r.state, r.created_at, r.updated_at, r.submitted_at, r.server_revision,
                   json_set(f.j,
                       '$.values', json((SELECT json_group_object(a.key, json(a.value)) FROM json_each(f.j, '$.values') a WHERE instr(a.key, '/') = 0)),
                       '$.stamps', json((SELECT json_group_object(s.key, json(s.value)) FROM json_each(f.j, '$.stamps') s WHERE instr(s.key, '/') = 0))) AS fields,
                   \(localEditsJSON(of: "r.id", topLevel: true)) AS local, r.missing_attachments, v.state AS review_state, v.comment AS review_comment
            FROM f JOIN records r ON r.rowid = f.rowid LEFT JOIN record_reviews v ON v.record_id = r.id
            """
        }
        guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [id.lowercased]) else { return nil }
        return try record(from: row)
    }

    static func record(from row: Row) throws -> StoredRecord {
        let key: String = row["id"]
        guard let id = UUID(text: key), let state = RecordState(rawValue: row["state"]) else {
            throw DraftStoreError(.databaseDamaged, "The stored record \(key) cannot be read (bad id or state).")
        }
        return StoredRecord(
            id: id, form: FormKey(id: row["form_id"], version: row["form_version"]), state: state,
            createdAt: date(row["created_at"]), updatedAt: date(row["updated_at"]),
            submittedAt: (row["submitted_at"] as Int64?).map(date), serverRevision: row["server_revision"],
            synced: try decodeSynced(row["fields"], record: key), pending: try decodePending(row["local"], record: key),
            review: review(state: row["review_state"], comment: row["review_comment"]),
            missingOnServer: missingAttachments(row["missing_attachments"]))
    }

    /// The hashes of a `missing_attachments` column (a JSON array of them, or NULL).
    static func missingAttachments(_ json: String?) -> [String] {
        guard let json, let hashes = try? JSONDecoder().decode([String].self, from: Data(json.utf8)) else { return [] }
        return hashes
    }

    static func review(state: String?, comment: String?) -> RecordReview? {
        state.flatMap(ReviewState.init(rawValue:)).map { RecordReview(state: $0, comment: comment) }
    }

    static func decodeSynced(_ json: String, record: String) throws -> RecordFields {
        do {
            return try RecordFields(jsonBytes: Array(json.utf8))
        } catch {
            throw DraftStoreError(.databaseDamaged, "The stored fields of record \(record) cannot be read (\(error)).")
        }
    }

    static func decodePending(_ json: String, record: String) throws -> FieldValues {
        do {
            return try fieldValues(json: json)
        } catch {
            throw DraftStoreError(.databaseDamaged, "The unsent edits of record \(record) cannot be read (\(error)).")
        }
    }

    static func eachSummary(_ db: Database, state: RecordState?, _ body: (RecordSummary) throws -> Void) throws {
        // Titles first (a handful of rows), so the listing itself reads only the covering index
        // records_by_state and never the records' field values.
        var titles: [FormKey: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, version, title FROM forms") {
            titles[FormKey(id: row[0], version: row[1])] = row[2]
        }
        let filter = state == nil ? "r.state IN ('draft', 'submitted')" : "r.state = ?"
        let arguments: StatementArguments = state.map { [$0.rawValue] } ?? []
        let rows = try Row.fetchCursor(db, sql: """
            SELECT r.id, r.form_id, r.form_version, r.state, r.created_at, r.updated_at, v.state, v.comment
            FROM records r INDEXED BY records_by_state LEFT JOIN record_reviews v ON v.record_id = r.id
            WHERE \(filter) ORDER BY r.updated_at DESC, r.id DESC
            """, arguments: arguments)
        while let row = try rows.next() {
            guard let id = UUID(text: row[0]), let state = RecordState(rawValue: row[3]) else { continue }
            let form = FormKey(id: row[1], version: row[2])
            try body(RecordSummary(
                id: id, form: form, formTitle: titles[form] ?? form.id, state: state,
                createdAt: date(row[4]), updatedAt: date(row[5]), review: review(state: row[6], comment: row[7])))
        }
    }

    /// Reads this database's hybrid logical clock, ticks it and stores the new reading, inside the
    /// caller's transaction (so concurrent processes never hand out the same reading).
    static func tick(_ db: Database) throws -> (HybridTimestamp, String) {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT clock, device_id FROM sync_state WHERE id = 1")) else {
            throw DraftStoreError(.databaseDamaged, "The device database has no sync state row.")
        }
        var clock = HybridLogicalClock(last: HybridTimestamp(rawValue: row[0]))
        let reading = clock.tick()
        try db.cachedStatement(sql: "UPDATE sync_state SET clock = ? WHERE id = 1").execute(arguments: [reading.rawValue])
        return (reading, row[1])
    }
}

import FormModel
import Foundation
import GRDB
import ServerStorage
import SyncCore

extension SQLiteStorage {
    /// The columns a record is read from, first in every statement that reads records (``storedRecord(_:)``
    /// reads them by position, in this order: ``RecordColumn``).
    package static let recordColumns = """
        r.id, r.form_id, r.form_version, r.state, r.author_id, u.name AS author_name, r.shared, r.revision, r.sequence, r.fields,
        r.review_state, r.review_comment, r.created_at, r.submitted_at, r.updated_at, r.received_at, r.device
        """

    /// The position of each of ``recordColumns`` in a row. A row's value is read by position: GRDB finds a column
    /// by name by lowercasing the name and every column name before it, for each value read.
    package enum RecordColumn: Int, CaseIterable {
        case id, formID, formVersion, state, authorID, authorName, shared, revision, sequence, fields
        case reviewState, reviewComment, createdAt, submittedAt, updatedAt, receivedAt, device
    }

    public func push(
        projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID],
        plan: @escaping @Sendable (PushSnapshot) throws -> PushPlan
    ) async throws -> PushPlan {
        let committed = try await groupWrite { db in
            let snapshot = try Self.pushSnapshot(db, projectID: projectID, clientID: clientID, mutationIDs: mutationIDs, recordIDs: recordIDs, entityIDs: entityIDs)
            return try Self.write(db, try plan(snapshot), projectID: projectID, clientID: clientID, webhookSignal: webhookSignal)
        }
        return committed
    }

    /// Compares revisions only, under the single writer: the records' and entities' content is read (and
    /// decoded) only when they moved, to hand back for the push to be decided again.
    public func commit(
        _ plan: PushPlan, planned: PushSnapshot, projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID]
    ) async throws -> PushPlan {
        let expected = planned.revisions
        let plannedEntityIDs = PushSnapshot.entityIDs(named: entityIDs, records: planned.records)
        let committed = try await groupWrite { db in
            let current = try Self.pushRevisions(
                db, projectID: projectID, clientID: clientID, mutationIDs: mutationIDs, recordIDs: recordIDs, entityIDs: plannedEntityIDs)
            guard current == expected else {
                throw PushSnapshotMoved(snapshot: try Self.pushSnapshot(
                    db, projectID: projectID, clientID: clientID, mutationIDs: mutationIDs, recordIDs: recordIDs, entityIDs: entityIDs))
            }
            return try Self.write(db, plan, projectID: projectID, clientID: clientID, webhookSignal: webhookSignal)
        }
        return committed
    }

    /// The revisions of what a push's snapshot holds (``PushSnapshot/Revisions``), read without the records' and
    /// entities' content. `entityIds`: every entity the snapshot holds (when the records' revisions are the
    /// planned ones, the entities their stored fields name are the planned snapshot's).
    static func pushRevisions(
        _ db: Database, projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID]
    ) throws -> PushSnapshot.Revisions {
        var outcomes: [String: PushSnapshot.Revisions.Outcome] = [:]
        if !mutationIDs.isEmpty {
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                SELECT mutation_id, user_id, digest FROM mutations
                WHERE project_id = ? AND client_id = ? AND mutation_id IN (SELECT value FROM json_each(?))
                """), arguments: [projectID, clientID, JSONWriter.array(of: mutationIDs)]) {
                outcomes[row[0]] = PushSnapshot.Revisions.Outcome(userID: row[1], digest: row[2])
            }
        }
        func revisions(_ sql: String, _ ids: [UUID]) throws -> [UUID: Int64] {
            guard !ids.isEmpty else { return [:] }
            var result: [UUID: Int64] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: sql), arguments: [projectID, JSONWriter.array(of: ids.map(\.lowercased))]) {
                let id: String = row[0]
                guard let uuid = UUID(text: id) else { continue }
                result[uuid] = row[1]
            }
            return result
        }
        return PushSnapshot.Revisions(
            outcomes: outcomes,
            records: try revisions("SELECT id, revision FROM records WHERE project_id = ? AND id IN (SELECT value FROM json_each(?))", recordIDs),
            entities: try revisions("SELECT id, revision FROM entities WHERE project_id = ? AND id IN (SELECT value FROM json_each(?))", entityIDs),
            closedForms: try closedForms(db, projectID: projectID))
    }

    /// Writes a push's plan in the writer's transaction: records with sequence numbers in commit order, history,
    /// entities, resolutions, outcomes, conflicts and webhook events.
    static func write(_ db: Database, _ plan: PushPlan, projectID: Int64, clientID: String, webhookSignal: WebhookSignal? = nil) throws -> PushPlan {
        var decided = plan
        let encoded = decided.encoding()
        let now = Date().timeIntervalSince1970
        var sequences: [UUID: Int64] = [:]
        if !decided.records.isEmpty {
            // The serialized commit step: numbers are taken inside the writing transaction, so they
            // become visible in the order they were assigned (see ServerStorage).
            let count = Int64(decided.records.count)
            let last = try Int64.fetchOne(
                db.cachedStatement(sql: "UPDATE projects SET last_sequence = last_sequence + ? WHERE id = ? RETURNING last_sequence"),
                arguments: [count, projectID]) ?? count
            var sequence = last - count + 1
            let upsert = try db.cachedStatement(sql: """
                INSERT INTO records (
                    project_id, id, form_id, form_version, state, author_id, shared, revision, sequence, fields, updated_at,
                    review_state, review_comment, created_at, submitted_at, device, received_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (project_id, id) DO UPDATE SET
                    form_version = excluded.form_version, state = excluded.state, shared = excluded.shared,
                    revision = excluded.revision, sequence = excluded.sequence, fields = excluded.fields, updated_at = excluded.updated_at,
                    review_state = excluded.review_state, review_comment = excluded.review_comment, submitted_at = excluded.submitted_at,
                    received_at = excluded.received_at
                """)
            for index in decided.records.indices {
                decided.records[index].sequence = sequence
                let record = decided.records[index]
                try upsert.execute(arguments: [
                    projectID, record.id.lowercased, record.form.id, record.form.version, record.state.rawValue,
                    record.authorID, record.shared, record.revision, sequence, encoded.fields[index], record.times.updated?.timeIntervalSince1970 ?? now,
                    record.review?.state.rawValue, record.review?.comment, record.times.created?.timeIntervalSince1970 ?? now,
                    record.times.submitted?.timeIntervalSince1970, record.device, record.receivedAt?.timeIntervalSince1970 ?? now,
                ])
                sequences[record.id] = sequence
                sequence += 1
            }
            try Self.writeAttachmentReferences(db, projectID: projectID, decided.records, history: decided.history)
        }
        try Self.writeHistory(db, projectID: projectID, decided.history, details: encoded.history)
        // The records' entity changes, in the records' transaction (docs/entity-lists.md).
        try Self.writeEntities(db, projectID: projectID, &decided.entities, history: decided.entityHistory, conflicts: decided.entityConflicts, now: now)
        try Self.resolve(db, projectID: projectID, decided.resolvedConflicts, history: decided.history, now: now)
        let insertOutcome = try db.cachedStatement(sql: """
            INSERT INTO mutations (project_id, client_id, mutation_id, user_id, digest, outcome, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        for (stored, outcome) in zip(decided.newOutcomes, encoded.outcomes) {
            try insertOutcome.execute(arguments: [projectID, clientID, stored.mutationID, stored.userID, stored.digest, outcome, now])
        }
        let insertConflict = try db.cachedStatement(sql: """
            INSERT INTO conflicts (project_id, record_id, mutation_id, client_id, entry, open, created_at, sequence, loser)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var conflictIDs: [Int64] = []
        for (conflict, entry) in zip(decided.conflicts, encoded.conflicts) {
            try insertConflict.execute(arguments: [
                projectID, conflict.recordID.lowercased, conflict.mutationID, conflict.clientID, entry, conflict.entry.open, now,
                sequences[conflict.recordID], conflict.otherLoser,
            ])
            conflictIDs.append(db.lastInsertedRowID)
        }
        // The conflict log keeps the attachments its entries hold (AttachmentCollectionPolicy).
        let keep = try db.cachedStatement(sql: "INSERT OR IGNORE INTO conflict_attachment_refs (project_id, sha256, record_id) VALUES (?, ?, ?)")
        for (recordID, sha256) in decided.conflictAttachmentReferences {
            try keep.execute(arguments: [projectID, sha256, recordID.lowercased])
        }
        // The events this push reports, in its transaction (WebhookStorage).
        (decided.webhookDeliveries, decided.webhookClaims) = try Self.writeWebhookEvents(
            db, projectID: projectID, plan: decided, encoded: encoded, conflictIDs: conflictIDs, now: now, claim: webhookSignal?.pushClaim(now: Date()))
        return decided
    }

    public func changes(projectID: Int64, after: Int64, limit: Int, maxBytes: Int, visibility: RecordVisibility) async throws -> FeedPage {
        try await pool.read { db in
            let (userID, shared) = visibility.viewer
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT r.id, r.form_id, r.form_version, r.state, u.name, r.revision, r.sequence, r.fields, r.review_state, r.review_comment,
                    r.created_at, r.updated_at, r.submitted_at,
                    (SELECT group_concat(m.sha256, ' ') FROM (
                        SELECT DISTINCT a.sha256 FROM attachment_refs a
                        WHERE a.project_id = r.project_id AND a.record_id = r.id
                          AND NOT EXISTS (SELECT 1 FROM attachment_holders h WHERE h.project_id = a.project_id AND h.sha256 = a.sha256 AND h.user_id = a.added_by)
                        ORDER BY a.sha256) m) AS missing
                FROM records r JOIN users u ON u.id = r.author_id
                WHERE r.project_id = ? AND r.sequence > ? AND (r.author_id = ? OR (? AND r.shared))
                ORDER BY r.sequence LIMIT ?
                """), arguments: [projectID, after, userID, shared, limit + 1])
            var records: [RecordEnvelope] = []
            var bytes = 0
            while let row = try rows.next() {
                let fields: String = row[7]
                if records.count == limit || (!records.isEmpty && bytes + fields.utf8.count > maxBytes) {
                    return FeedPage(records: records, hasMore: true)
                }
                bytes += fields.utf8.count
                records.append(RecordEnvelope(
                    recordID: UUID(text: row[0]) ?? UUID(), form: FormKey(id: row[1], version: row[2]),
                    state: RecordState(rawValue: row[3]) ?? .draft, revision: row[5], sequence: row[6], author: row[4],
                    review: Self.review(state: row[8], comment: row[9]),
                    times: RecordTimes(created: Self.date(row[10]), updated: Self.date(row[11]), submitted: Self.date(row[12])),
                    missingAttachments: (row[13] as String?)?.split(separator: " ").map(String.init) ?? [], fieldsJSON: Array(fields.utf8)))
            }
            return FeedPage(records: records, hasMore: false)
        }
    }

    public func lostConflicts(projectID: Int64, device: String, after: Int64, through: Int64, visibility: RecordVisibility) async throws -> [LostConflictRow] {
        guard through > after else { return [] }
        return try await pool.read { db in
            let (userID, shared) = visibility.viewer
            return try Row.fetchAll(db.cachedStatement(sql: """
                SELECT c.id, c.record_id, c.entry FROM conflicts c INDEXED BY conflicts_by_loser
                JOIN records r ON r.project_id = c.project_id AND r.id = c.record_id
                WHERE c.project_id = ? AND c.loser = ? AND c.sequence > ? AND c.sequence <= ? AND (r.author_id = ? OR (? AND r.shared))
                ORDER BY c.sequence, c.id
                """), arguments: [projectID, device, after, through, userID, shared]).map {
                LostConflictRow(id: $0[0], recordID: $0[1], entry: $0[2])
            }
        }
    }

    public func pushSnapshot(projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID]) async throws -> PushSnapshot {
        try await pool.read { db in
            try Self.pushSnapshot(db, projectID: projectID, clientID: clientID, mutationIDs: mutationIDs, recordIDs: recordIDs, entityIDs: entityIDs)
        }
    }

    static func pushSnapshot(_ db: Database, projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID]) throws -> PushSnapshot {
        let records = try records(db, projectID: projectID, ids: recordIDs)
        return PushSnapshot(
            storedOutcomes: try storedOutcomes(db, projectID: projectID, clientID: clientID, mutationIDs: mutationIDs),
            records: records,
            entities: try entities(db, projectID: projectID, ids: PushSnapshot.entityIDs(named: entityIDs, records: records)),
            closedForms: try closedForms(db, projectID: projectID))
    }

    /// The ids of the project's forms closed to new records (read with the rest of a push's snapshot).
    static func closedForms(_ db: Database, projectID: Int64) throws -> Set<String> {
        Set(try String.fetchAll(db.cachedStatement(sql: "SELECT form_id FROM form_states WHERE project_id = ? AND closed"), arguments: [projectID]))
    }

    public func record(projectID: Int64, id: UUID) async throws -> StoredRecord? {
        try await pool.read { db in try Self.records(db, projectID: projectID, ids: [id])[id] }
    }

    public func records(projectID: Int64, formID: String, after: UUID?, limit: Int) async throws -> [StoredRecord] {
        try await pool.read { db in
            try Self.storedRecords(db.cachedStatement(sql: """
                SELECT \(Self.recordColumns) FROM records r JOIN users u ON u.id = r.author_id
                WHERE r.project_id = ? AND r.form_id = ? AND r.id > ? ORDER BY r.id LIMIT ?
                """), arguments: [projectID, formID, after?.lowercased ?? "", limit])
        }
    }

    public func conflicts(projectID: Int64, recordID: UUID) async throws -> [LoggedConflict] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT mutation_id, client_id, entry FROM conflicts WHERE project_id = ? AND record_id = ? ORDER BY id
                """, arguments: [projectID, recordID.lowercased]).map { row in
                let entry: String = row["entry"]
                var reader = JSONReader(Array(entry.utf8))
                return LoggedConflict(
                    recordID: recordID, mutationID: row["mutation_id"], clientID: row["client_id"],
                    entry: try ConflictEntry.read(from: &reader))
            }
        }
    }

    // MARK: Rows

    static func storedOutcomes(_ db: Database, projectID: Int64, clientID: String, mutationIDs: [String]) throws -> [String: StoredOutcome] {
        guard !mutationIDs.isEmpty else { return [:] }
        var result: [String: StoredOutcome] = [:]
        // The ids as one JSON array: the statement is the same for every batch, so it is prepared once.
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT mutation_id, user_id, digest, outcome FROM mutations
            WHERE project_id = ? AND client_id = ? AND mutation_id IN (SELECT value FROM json_each(?))
            """), arguments: [projectID, clientID, JSONWriter.array(of: mutationIDs)]) {
            let outcome: String = row["outcome"]
            var reader = JSONReader(Array(outcome.utf8))
            let stored = StoredOutcome(
                mutationID: row["mutation_id"], userID: row["user_id"], digest: row["digest"],
                outcome: try MutationOutcome.read(from: &reader))
            result[stored.mutationID] = stored
        }
        return result
    }

    static func records(_ db: Database, projectID: Int64, ids: [UUID]) throws -> [UUID: StoredRecord] {
        guard !ids.isEmpty else { return [:] }
        var result: [UUID: StoredRecord] = [:]
        for record in try storedRecords(db.cachedStatement(sql: """
            SELECT \(recordColumns) FROM records r JOIN users u ON u.id = r.author_id
            WHERE r.project_id = ? AND r.id IN (SELECT value FROM json_each(?))
            """), arguments: [projectID, JSONWriter.array(of: ids.map(\.lowercased))]) {
            result[record.id] = record
        }
        return result
    }

    /// The records a statement that selects ``recordColumns`` first reads, each decoded as SQLite steps to it:
    /// rows are not copied, and each value is read by its position.
    static func storedRecords(_ statement: Statement, arguments: StatementArguments) throws -> [StoredRecord] {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        var records: [StoredRecord] = []
        while let row = try rows.next() { records.append(try storedRecord(row)) }
        return records
    }

    /// A record from a row whose first columns are ``recordColumns``.
    static func storedRecord(_ row: Row) throws -> StoredRecord {
        func column(_ column: RecordColumn) -> Int { column.rawValue }
        let id: String = row[column(.id)]
        // The fields' JSON bytes as SQLite holds them (a TEXT value's bytes are its UTF-8), copied once.
        let fields = try row.withUnsafeData(atIndex: column(.fields)) { data in data.map { [UInt8]($0) } ?? [] }
        return StoredRecord(
            id: UUID(text: id) ?? UUID(),
            form: FormKey(id: row[column(.formID)], version: row[column(.formVersion)]),
            state: RecordState(rawValue: row[column(.state)]) ?? .draft,
            authorID: row[column(.authorID)], authorName: row[column(.authorName)], shared: row[column(.shared)],
            revision: row[column(.revision)], sequence: row[column(.sequence)],
            review: review(state: row[column(.reviewState)], comment: row[column(.reviewComment)]),
            times: RecordTimes(created: date(row[column(.createdAt)]), updated: date(row[column(.updatedAt)]), submitted: date(row[column(.submittedAt)])),
            receivedAt: date(row[column(.receivedAt)]), device: row[column(.device)],
            fields: try RecordFields(jsonBytes: fields))
    }

    static func review(state: String?, comment: String?) -> RecordReview? {
        state.flatMap(ReviewState.init(rawValue:)).map { RecordReview(state: $0, comment: comment) }
    }

    static func date(_ seconds: Double?) -> Date? {
        seconds.map(Date.init(timeIntervalSince1970:))
    }
}

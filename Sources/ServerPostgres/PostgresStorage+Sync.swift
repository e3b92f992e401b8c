import FormModel
import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServerStorage
import SyncCore

extension PostgresStorage {
    static let recordColumns = """
        r.id, r.form_id, r.form_version, r.state, r.author_id, u.name, r.shared, r.revision, r.sequence, r.fields,
        r.review_state, r.review_comment, r.created_at, r.submitted_at, r.updated_at, r.device, r.received_at
        """

    /// One push batch in one transaction; see the type's documentation for why the feed stays gap-free.
    ///
    /// 1. Advisory locks, in ascending key order (so two batches never wait on each other in a cycle), on
    ///    the device and on every record of the batch: a concurrent batch on another instance that touches
    ///    the same record, or a retry of the same batch, waits here until this one commits.
    /// 2. Read the stored outcomes and the records (READ COMMITTED: each read sees every earlier commit).
    /// 3. Let `plan` decide, in Swift, holding no lock on the project.
    /// 4. Take the sequence numbers from the project's counter row (its lock is held until COMMIT) and
    ///    write records, outcomes and conflicts, each with one statement over arrays.
    public func push(
        projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID],
        plan: @escaping @Sendable (PushSnapshot) throws -> PushPlan
    ) async throws -> PushPlan {
        let committed = try await transaction { connection in
            try await Self.lockPush(connection, projectID: projectID, clientID: clientID, recordIDs: recordIDs, entityIDs: entityIDs)
            let snapshot = try await Self.lockedSnapshot(
                connection, projectID: projectID, clientID: clientID, mutationIDs: mutationIDs, recordIDs: recordIDs, entityIDs: entityIDs)
            return try await Self.write(connection, try plan(snapshot), projectID: projectID, clientID: clientID, webhookSignal: webhookSignal)
        }
        webhookSignal.committed(committed)
        vacuum.wrote(committed.records.count)
        return committed
    }

    /// Compares revisions only, under the push's locks (``PushSnapshot/Revisions``): the records' and entities'
    /// content is read (and decoded) only when they moved, to hand back for the push to be decided again.
    public func commit(
        _ plan: PushPlan, planned: PushSnapshot, projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID]
    ) async throws -> PushPlan {
        let expected = planned.revisions
        let plannedEntityIDs = PushSnapshot.entityIDs(named: entityIDs, records: planned.records)
        let committed = try await transaction { connection in
            try await Self.lockPush(connection, projectID: projectID, clientID: clientID, recordIDs: recordIDs, entityIDs: entityIDs)
            let records = try await Self.revisions(connection, table: "records", projectID: projectID, ids: recordIDs)
            // The records' revisions are the planned ones, or the push is decided again: so are the entities
            // their stored fields name, locked after the records as `push` locks them.
            if records == expected.records {
                try await Self.lockEntities(connection, projectID: projectID, Set(plannedEntityIDs).subtracting(entityIDs))
            }
            let current = PushSnapshot.Revisions(
                outcomes: try await Self.outcomeDigests(connection, projectID: projectID, clientID: clientID, mutationIDs: mutationIDs),
                records: records,
                entities: records == expected.records ? try await Self.revisions(connection, table: "entities", projectID: projectID, ids: plannedEntityIDs) : [:],
                closedForms: try await Self.closedForms(connection, projectID: projectID))
            guard current == expected else {
                throw PushSnapshotMoved(snapshot: try await Self.lockedSnapshot(
                    connection, projectID: projectID, clientID: clientID, mutationIDs: mutationIDs, recordIDs: recordIDs, entityIDs: entityIDs))
            }
            return try await Self.write(connection, plan, projectID: projectID, clientID: clientID, webhookSignal: webhookSignal)
        }
        webhookSignal.committed(committed)
        vacuum.wrote(committed.records.count)
        return committed
    }

    /// Step 1 of a push: advisory locks, in ascending key order (so two batches never wait on each other in a
    /// cycle), on the device and on every record and named entity of the batch.
    static func lockPush(_ connection: PostgresConnection, projectID: Int64, clientID: String, recordIDs: [UUID], entityIDs: [UUID]) async throws {
        let keys = Set([lockKey("\(projectID)/device/\(clientID)")] + recordIDs.map { lockKey("\(projectID)/record/\($0.lowercased)") }
            + entityIDs.map { lockKey("\(projectID)/entity/\($0.lowercased)") }).sorted()
        _ = try await connection.query("SELECT pg_advisory_xact_lock(k) FROM unnest(\(keys)::int8[]) AS k", logger: .quiet).collect()
    }

    /// Locks more entities (ascending key order), after the batch's own locks.
    static func lockEntities(_ connection: PostgresConnection, projectID: Int64, _ ids: Set<UUID>) async throws {
        guard !ids.isEmpty else { return }
        let keys = ids.map { lockKey("\(projectID)/entity/\($0.lowercased)") }.sorted()
        _ = try await connection.query("SELECT pg_advisory_xact_lock(k) FROM unnest(\(keys)::int8[]) AS k", logger: .quiet).collect()
    }

    /// Step 2 of a push, under the locks of ``lockPush(_:projectID:clientID:recordIDs:entityIDs:)``: the whole
    /// snapshot, records and entities with their content.
    static func lockedSnapshot(
        _ connection: PostgresConnection, projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID]
    ) async throws -> PushSnapshot {
        let records = try await records(connection, projectID: projectID, ids: recordIDs)
        let allEntityIDs = PushSnapshot.entityIDs(named: entityIDs, records: records)
        // The entities the batch's records changed before (a later edit of such a record changes the same
        // entity): locked too, once the records are known.
        try await lockEntities(connection, projectID: projectID, Set(allEntityIDs).subtracting(entityIDs))
        return PushSnapshot(
            storedOutcomes: try await storedOutcomes(connection, projectID: projectID, clientID: clientID, mutationIDs: mutationIDs),
            records: records, entities: try await entities(connection, projectID: projectID, ids: allEntityIDs),
            closedForms: try await closedForms(connection, projectID: projectID))
    }

    /// The revision of each of `ids` stored in `table` (`records` or `entities`), without their content.
    static func revisions(_ connection: PostgresConnection, table: StaticString, projectID: Int64, ids: [UUID]) async throws -> [UUID: Int64] {
        guard !ids.isEmpty else { return [:] }
        var result: [UUID: Int64] = [:]
        let rows = try await connection.query(
            "SELECT id, revision FROM \(unescaped: "\(table)") WHERE project_id = \(projectID) AND id = ANY(\(ids)::uuid[])", logger: .quiet)
        for try await (id, revision) in rows.decode((UUID, Int64).self) { result[id] = revision }
        return result
    }

    /// The user and digest of each stored outcome of `mutationIDs`, without the outcomes themselves.
    static func outcomeDigests(
        _ connection: PostgresConnection, projectID: Int64, clientID: String, mutationIDs: [String]
    ) async throws -> [String: PushSnapshot.Revisions.Outcome] {
        guard !mutationIDs.isEmpty else { return [:] }
        var result: [String: PushSnapshot.Revisions.Outcome] = [:]
        for try await (mutationID, userID, digest) in try await connection.query("""
            SELECT mutation_id, user_id, digest FROM mutations
            WHERE project_id = \(projectID) AND client_id = \(clientID) AND mutation_id = ANY(\(mutationIDs)::text[])
            """, logger: .quiet).decode((String, Int64, ByteBuffer).self) {
            result[mutationID] = PushSnapshot.Revisions.Outcome(userID: userID, digest: Data(digest.readableBytesView))
        }
        return result
    }

    /// Steps 3 and 4 of a push: writes a plan decided on the locked snapshot (records with sequence numbers in
    /// commit order, history, entities, resolutions, outcomes, conflicts, webhook events).
    static func write(
        _ connection: PostgresConnection, _ plan: PushPlan, projectID: Int64, clientID: String, webhookSignal: WebhookSignal? = nil
    ) async throws -> PushPlan {
        var decided = plan
        let encoded = decided.encoding()
        let now = Date().timeIntervalSince1970
        if decided.writesAttachmentReferences {
            // Shared with every other such push; a sweep takes it alone for its last check and removal.
            _ = try await connection.query("SELECT pg_advisory_xact_lock_shared(\(Self.attachmentSweepLockKey(projectID)))", logger: .quiet).collect()
        }
        if !decided.records.isEmpty {
            let count = Int64(decided.records.count)
            // The serialized commit step (see PostgresStorage): this row lock is held until COMMIT.
            let rows = try await connection.query(
                "UPDATE projects SET last_sequence = last_sequence + \(count) WHERE id = \(projectID) RETURNING last_sequence",
                logger: .quiet).collect()
            guard let last = try rows.first?.decode(Int64.self) else {
                throw StorageError(.unknownProject, "There is no project with id \(projectID).")
            }
            try await Self.announceChanges(connection, projectID: projectID, lastSequence: last)
            for index in decided.records.indices { decided.records[index].sequence = last - count + 1 + Int64(index) }
            let records = decided.records
            let fields = encoded.fields
            try await connection.query("""
                INSERT INTO records (
                    project_id, id, form_id, form_version, state, author_id, shared, revision, sequence, fields,
                    updated_at, review_state, review_comment, created_at, submitted_at, device, received_at)
                SELECT \(projectID), r.id, r.form_id, r.form_version, r.state, r.author_id, r.shared, r.revision, r.sequence, r.fields,
                    r.updated_at, NULLIF(r.review_state, ''), NULLIF(r.review_comment, ''), r.created_at, NULLIF(r.submitted_at, -1),
                    NULLIF(r.device, ''), r.received_at
                FROM unnest(
                    \(records.map(\.id))::uuid[], \(records.map(\.form.id))::text[], \(records.map { Int64($0.form.version) })::int8[],
                    \(records.map(\.state.rawValue))::text[], \(records.map(\.authorID))::int8[], \(records.map(\.shared))::bool[],
                    \(records.map(\.revision))::int8[], \(records.map(\.sequence))::int8[], \(fields)::text[],
                    \(records.map { $0.times.updated?.timeIntervalSince1970 ?? now })::float8[], \(records.map { $0.review?.state.rawValue ?? "" })::text[],
                    \(records.map { $0.review?.comment ?? "" })::text[], \(records.map { $0.times.created?.timeIntervalSince1970 ?? now })::float8[],
                    \(records.map { $0.times.submitted?.timeIntervalSince1970 ?? -1 })::float8[], \(records.map { $0.device ?? "" })::text[],
                    \(records.map { $0.receivedAt?.timeIntervalSince1970 ?? now })::float8[]
                ) AS r (id, form_id, form_version, state, author_id, shared, revision, sequence, fields, updated_at, review_state,
                        review_comment, created_at, submitted_at, device, received_at)
                ON CONFLICT (project_id, id) DO UPDATE SET
                    form_version = excluded.form_version, state = excluded.state, shared = excluded.shared,
                    revision = excluded.revision, sequence = excluded.sequence, fields = excluded.fields, updated_at = excluded.updated_at,
                    review_state = excluded.review_state, review_comment = excluded.review_comment, submitted_at = excluded.submitted_at,
                    received_at = excluded.received_at
                """, logger: .quiet)
            try await Self.writeAttachmentReferences(connection, projectID: projectID, records, history: decided.history)
        } else if !decided.history.isEmpty {
            // History without a record row (a conflict resolution that kept the server's value): the same
            // project row lock a push's counter update takes, held until COMMIT, before the records' latest
            // hashes are read, so every writer of history reads the previous hash under the one lock.
            let rows = try await connection.query(
                "SELECT id FROM projects WHERE id = \(projectID) FOR NO KEY UPDATE", logger: .quiet).collect()
            guard !rows.isEmpty else { throw StorageError(.unknownProject, "There is no project with id \(projectID).") }
        }
        try await Self.writeHistory(connection, projectID: projectID, decided.history, details: encoded.history)
        // The records' entity changes, in the records' transaction (docs/entity-lists.md).
        var entities = decided.entities
        try await Self.writeEntities(connection, projectID: projectID, &entities, history: decided.entityHistory, conflicts: decided.entityConflicts, now: now)
        decided.entities = entities
        try await Self.resolve(connection, projectID: projectID, decided.resolvedConflicts, history: decided.history, now: now)
        if !decided.newOutcomes.isEmpty {
            let outcomes = decided.newOutcomes
            try await connection.query("""
                INSERT INTO mutations (project_id, client_id, mutation_id, user_id, digest, outcome, created_at)
                SELECT \(projectID), \(clientID), *, \(now) FROM unnest(
                    \(outcomes.map(\.mutationID))::text[], \(outcomes.map(\.userID))::int8[],
                    \(outcomes.map { ByteBuffer(bytes: $0.digest) })::bytea[], \(encoded.outcomes)::text[])
                """, logger: .quiet)
        }
        var conflictIDs: [Int64] = []
        if !decided.conflicts.isEmpty {
            let conflicts = decided.conflicts
            let sequences = Dictionary(decided.records.map { ($0.id, $0.sequence) }, uniquingKeysWith: { $1 })
            let entries = encoded.conflicts
            // WITH ORDINALITY keeps the log in the batch's order (ids are assigned in insertion order).
            let inserted = try await connection.query("""
                INSERT INTO conflicts (project_id, record_id, mutation_id, client_id, entry, open, created_at, sequence, loser)
                SELECT \(projectID), c.record_id, c.mutation_id, c.client_id, c.entry, c.open, \(now), NULLIF(c.sequence, 0),
                    NULLIF(c.loser, '') FROM unnest(
                    \(conflicts.map(\.recordID))::uuid[], \(conflicts.map(\.mutationID))::text[], \(conflicts.map(\.clientID))::text[],
                    \(entries)::text[], \(conflicts.map(\.entry.open))::bool[], \(conflicts.map { sequences[$0.recordID] ?? 0 })::int8[],
                    \(conflicts.map { $0.otherLoser ?? "" })::text[]
                ) WITH ORDINALITY AS c (record_id, mutation_id, client_id, entry, open, sequence, loser, n) ORDER BY c.n
                RETURNING id
                """, logger: .quiet)
            for try await id in inserted.decode(Int64.self) { conflictIDs.append(id) }
            // Identities are taken in insertion order: sorted, the ids follow the batch's order.
            conflictIDs.sort()
            // The conflict log keeps the attachments its entries hold (AttachmentCollectionPolicy).
            let kept = decided.conflictAttachmentReferences
            if !kept.isEmpty {
                try await connection.query("""
                    INSERT INTO conflict_attachment_refs (project_id, sha256, record_id)
                    SELECT \(projectID), * FROM unnest(\(kept.map(\.sha256))::text[], \(kept.map(\.recordID))::uuid[]) ON CONFLICT DO NOTHING
                    """, logger: .quiet)
            }
        }
        // The events this push reports, in its transaction (WebhookStorage).
        (decided.webhookDeliveries, decided.webhookClaims) = try await Self.writeWebhookEvents(
            connection, projectID: projectID, plan: decided, encoded: encoded, conflictIDs: conflictIDs, now: now,
            claim: webhookSignal?.pushClaim(now: Date()))
        return decided
    }

    public func changes(projectID: Int64, after: Int64, limit: Int, maxBytes: Int, visibility: RecordVisibility) async throws -> FeedPage {
        let (userID, shared) = visibility.viewer
        let client = client
        return try await perform {
            let rows = try await client.query("""
                SELECT r.id, r.form_id, r.form_version, r.state, u.name, r.revision, r.sequence, r.fields, r.review_state, r.review_comment,
                    r.created_at, r.updated_at, r.submitted_at,
                    array(SELECT DISTINCT a.sha256 FROM attachment_refs a
                          WHERE a.project_id = r.project_id AND a.record_id = r.id
                            AND NOT EXISTS (SELECT 1 FROM attachment_holders h WHERE h.project_id = a.project_id AND h.sha256 = a.sha256 AND h.user_id = a.added_by)
                          ORDER BY a.sha256)
                FROM records r JOIN users u ON u.id = r.author_id
                WHERE r.project_id = \(projectID) AND r.sequence > \(after) AND (r.author_id = \(userID) OR (\(shared) AND r.shared))
                ORDER BY r.sequence LIMIT \(Int64(limit + 1))
                """)
            var records: [RecordEnvelope] = []
            var bytes = 0
            var hasMore = false
            for try await (id, formID, formVersion, state, author, revision, sequence, fields, reviewState, reviewComment, created, updated, submitted, missing) in rows.decode(
                (UUID, String, Int, String, String, Int64, Int64, String, String?, String?, Double?, Double, Double?, [String]).self) {
                if hasMore { continue }
                if records.count == limit || (!records.isEmpty && bytes + fields.utf8.count > maxBytes) {
                    hasMore = true
                    continue
                }
                bytes += fields.utf8.count
                records.append(RecordEnvelope(
                    recordID: id, form: FormKey(id: formID, version: formVersion), state: RecordState(rawValue: state) ?? .draft,
                    revision: revision, sequence: sequence, author: author, review: Self.review(state: reviewState, comment: reviewComment),
                    times: RecordTimes(created: Self.date(created), updated: Self.date(updated), submitted: Self.date(submitted)),
                    missingAttachments: missing, fieldsJSON: Array(fields.utf8)))
            }
            return FeedPage(records: records, hasMore: hasMore)
        }
    }

    public func lostConflicts(projectID: Int64, device: String, after: Int64, through: Int64, visibility: RecordVisibility) async throws -> [LostConflictRow] {
        guard through > after else { return [] }
        let (userID, shared) = visibility.viewer
        let client = client
        return try await perform {
            let rows = try await client.query("""
                SELECT c.id, c.record_id, c.entry FROM conflicts c
                JOIN records r ON r.project_id = c.project_id AND r.id = c.record_id
                WHERE c.project_id = \(projectID) AND c.loser = \(device) AND c.sequence > \(after) AND c.sequence <= \(through)
                  AND (r.author_id = \(userID) OR (\(shared) AND r.shared))
                ORDER BY c.sequence, c.id
                """)
            var result: [LostConflictRow] = []
            for try await (id, recordID, entry) in rows.decode((Int64, UUID, String).self) {
                result.append(LostConflictRow(id: id, recordID: recordID.lowercased, entry: entry))
            }
            return result
        }
    }

    public func pushSnapshot(projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID]) async throws -> PushSnapshot {
        let client = client
        return try await perform {
            try await client.withConnection { connection in
                let records = try await Self.records(connection, projectID: projectID, ids: recordIDs)
                return PushSnapshot(
                    storedOutcomes: try await Self.storedOutcomes(connection, projectID: projectID, clientID: clientID, mutationIDs: mutationIDs),
                    records: records,
                    entities: try await Self.entities(connection, projectID: projectID, ids: PushSnapshot.entityIDs(named: entityIDs, records: records)),
                    closedForms: try await Self.closedForms(connection, projectID: projectID))
            }
        }
    }

    /// The ids of the project's forms closed to new records, read on `connection` (in a push's transaction, the
    /// state of the forms as of that read: a form closed after it is taken as closed after the push).
    static func closedForms(_ connection: PostgresConnection, projectID: Int64) async throws -> Set<String> {
        var closed = Set<String>()
        let rows = try await connection.query("SELECT form_id FROM form_states WHERE project_id = \(projectID) AND closed", logger: .quiet)
        for try await formID in rows.decode(String.self) { closed.insert(formID) }
        return closed
    }

    public func record(projectID: Int64, id: UUID) async throws -> StoredRecord? {
        let client = client
        return try await perform {
            try await client.withConnection { connection in try await Self.records(connection, projectID: projectID, ids: [id])[id] }
        }
    }

    public func records(projectID: Int64, formID: String, after: UUID?, limit: Int) async throws -> [StoredRecord] {
        let client = client
        return try await perform {
            try await Self.storedRecords(try await client.query("""
                SELECT \(unescaped: Self.recordColumns) FROM records r JOIN users u ON u.id = r.author_id
                WHERE r.project_id = \(projectID) AND r.form_id = \(formID) AND (\(after)::uuid IS NULL OR r.id > \(after)::uuid)
                ORDER BY r.id LIMIT \(Int64(limit))
                """))
        }
    }

    public func conflicts(projectID: Int64, recordID: UUID) async throws -> [LoggedConflict] {
        let client = client
        return try await perform {
            var result: [LoggedConflict] = []
            for try await (mutationID, clientID, entry) in try await client.query("""
                SELECT mutation_id, client_id, entry FROM conflicts WHERE project_id = \(projectID) AND record_id = \(recordID) ORDER BY id
                """).decode((String, String, String).self) {
                var reader = JSONReader(Array(entry.utf8))
                result.append(LoggedConflict(
                    recordID: recordID, mutationID: mutationID, clientID: clientID,
                    entry: try ConflictEntry.read(from: &reader)))
            }
            return result
        }
    }

    // MARK: Rows

    /// A 64-bit advisory-lock key for `name`, the same in every process (FNV-1a; Swift's `Hasher` is seeded
    /// per process). A collision only makes two unrelated batches wait for each other.
    static func lockKey(_ name: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    static func storedOutcomes(_ connection: PostgresConnection, projectID: Int64, clientID: String, mutationIDs: [String]) async throws -> [String: StoredOutcome] {
        guard !mutationIDs.isEmpty else { return [:] }
        var result: [String: StoredOutcome] = [:]
        for try await (mutationID, userID, digest, outcome) in try await connection.query("""
            SELECT mutation_id, user_id, digest, outcome FROM mutations
            WHERE project_id = \(projectID) AND client_id = \(clientID) AND mutation_id = ANY(\(mutationIDs)::text[])
            """, logger: .quiet).decode((String, Int64, ByteBuffer, String).self) {
            var reader = JSONReader(Array(outcome.utf8))
            result[mutationID] = StoredOutcome(
                mutationID: mutationID, userID: userID, digest: Data(digest.readableBytesView),
                outcome: try MutationOutcome.read(from: &reader))
        }
        return result
    }

    static func records(_ connection: PostgresConnection, projectID: Int64, ids: [UUID]) async throws -> [UUID: StoredRecord] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await connection.query("""
            SELECT \(unescaped: recordColumns) FROM records r JOIN users u ON u.id = r.author_id
            WHERE r.project_id = \(projectID) AND r.id = ANY(\(ids)::uuid[])
            """, logger: .quiet)
        return Dictionary(uniqueKeysWithValues: try await storedRecords(rows).map { ($0.id, $0) })
    }

    static func storedRecords(_ rows: PostgresRowSequence) async throws -> [StoredRecord] {
        var result: [StoredRecord] = []
        for try await (id, formID, formVersion, state, authorID, authorName, shared, revision, sequence, fields,
                       reviewState, reviewComment, created, submitted, updated, device, received) in rows.decode(
            (UUID, String, Int, String, Int64, String, Bool, Int64, Int64, String, String?, String?, Double?, Double?, Double, String?, Double?).self) {
            result.append(try storedRecord(
                id: id, formID: formID, formVersion: formVersion, state: state, authorID: authorID, authorName: authorName, shared: shared,
                revision: revision, sequence: sequence, fields: fields, reviewState: reviewState, reviewComment: reviewComment,
                created: created, submitted: submitted, updated: updated, received: received, device: device))
        }
        return result
    }

    /// A record from the columns of ``recordColumns``.
    static func storedRecord(
        id: UUID, formID: String, formVersion: Int, state: String, authorID: Int64, authorName: String, shared: Bool, revision: Int64,
        sequence: Int64, fields: String, reviewState: String?, reviewComment: String?, created: Double?, submitted: Double?, updated: Double,
        received: Double?, device: String?
    ) throws -> StoredRecord {
        StoredRecord(
            id: id, form: FormKey(id: formID, version: formVersion), state: RecordState(rawValue: state) ?? .draft,
            authorID: authorID, authorName: authorName, shared: shared, revision: revision, sequence: sequence,
            review: review(state: reviewState, comment: reviewComment),
            times: RecordTimes(created: date(created), updated: date(updated), submitted: date(submitted)),
            receivedAt: date(received), device: device, fields: try RecordFields(jsonBytes: Array(fields.utf8)))
    }

    static func date(_ seconds: Double?) -> Date? {
        seconds.map(Date.init(timeIntervalSince1970:))
    }

    static func review(state: String?, comment: String?) -> RecordReview? {
        state.flatMap(ReviewState.init(rawValue:)).map { RecordReview(state: $0, comment: comment) }
    }
}

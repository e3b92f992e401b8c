import Foundation
import FormModel
import GRDB
package import SyncCore

extension DraftStore {
    /// Applies the server's outcomes of pushed mutations, all in one transaction: each record's revision
    /// and the values that won, every conflict logged, the acknowledged outbox rows and settled edits removed,
    /// the clock moved. Outcomes of mutations this device no longer holds (already applied) are ignored.
    ///
    /// A batch's records are read, and their acknowledged outbox rows, frozen mutations and settled edits
    /// removed, in one statement each; each record's merged fields are then written with one statement.
    ///
    /// Committed without waiting for the disk (`unsyncedWrite`): a process killed after the commit keeps it,
    /// and should a power cut lose it, the mutations are still frozen in `sent_mutations` (the transaction
    /// that removes them is the one lost), so the next push sends them again with the same ids and the
    /// server answers with the outcomes it stored: nothing is lost and nothing is applied twice. The next
    /// commit that waits for the disk (the next batch's freeze, any edit) makes this one durable too.
    ///
    /// `sent` is the batch as ``prepareOutgoingBatch(limit:)`` returned it: a mutation it froze comes with its
    /// value (``OutgoingMutation/mutation``), which is the mutation its stored body holds, so only the bodies of
    /// the others (frozen by an earlier attempt, or not given) are read back. Which mutations are applied, and to
    /// which records, is what `sent_mutations` holds either way.
    /// - Returns: how many conflicts the outcomes reported.
    @discardableResult
    package func applyOutcomes(_ outcomes: [MutationOutcome], serverClock: HybridTimestamp, sent given: [OutgoingMutation] = []) async throws -> Int {
        try await unsyncedWrite(doing: "applying the server's answer to a push") { db in
            var conflicts = 0
            let device = try String.fetchOne(db, sql: "SELECT device_id FROM sync_state WHERE id = 1") ?? "unknown-device"
            // The frozen mutations the outcomes answer, read in one statement; then they and the outbox rows they
            // cover leave, in one statement each (a record has one frozen mutation at most, so what each
            // outcome reads next is the same as if its own rows had left alone).
            let ids = JSONWriter.array(of: outcomes.map(\.mutationID))
            var known: [String: Mutation] = [:]
            for outgoing in given { if let mutation = outgoing.mutation { known[outgoing.mutationID] = mutation } }
            var sent: [String: (record: String, mutation: Mutation?)] = [:]
            var records: [String] = []
            var unread: [String] = []
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT mutation_id, record_id FROM sent_mutations WHERE mutation_id IN (SELECT value FROM json_each(?))
                """), arguments: [ids])
            while let row = try rows.next() {
                let id: String = row[0]
                let record: String = row[1]
                // The caller's frozen mutation stands in for the stored body only for the record it was frozen for.
                let mutation = known[id].flatMap { UUID(text: record) == $0.recordID ? $0 : nil }
                sent[id] = (row[1], mutation)
                records.append(row[1])
                if mutation == nil { unread.append(id) }
            }
            guard !sent.isEmpty else {
                try Self.observe(db, serverClock)
                return 0
            }
            if !unread.isEmpty {
                let bodies = try Row.fetchCursor(db.cachedStatement(sql: """
                    SELECT mutation_id, fs_open(body, 'mutation', mutation_id, record_id) FROM sent_mutations WHERE mutation_id IN (SELECT value FROM json_each(?))
                    """), arguments: [JSONWriter.array(of: unread)])
                while let row = try bodies.next() {
                    let body: String = row[1]
                    var reader = JSONReader(Array(body.utf8))
                    sent[row[0]]?.mutation = try Mutation.read(from: &reader)
                }
            }
            try db.cachedStatement(sql: """
                DELETE FROM outbox WHERE record_id IN (SELECT record_id FROM sent_mutations WHERE mutation_id IN (SELECT value FROM json_each(?1)))
                    AND mutation_id <= (SELECT s.last_outbox_id FROM sent_mutations s WHERE s.record_id = outbox.record_id)
                """).execute(arguments: [ids])
            try db.cachedStatement(sql: "DELETE FROM sent_mutations WHERE mutation_id IN (SELECT value FROM json_each(?))").execute(arguments: [ids])
            let batch = try SettlingBatch(db, records: records)
            var settled: [(record: String, key: String)] = []
            var refused: [DeviceSync.LoggedConflict] = []
            for outcome in outcomes {
                guard let frozen = sent.removeValue(forKey: outcome.mutationID), let mutation = frozen.mutation else { continue }
                conflicts += try Self.applyOutcome(db, outcome, record: frozen.record, mutation: mutation, batch: batch, device: device, settled: &settled, refused: &refused)
            }
            // Only the edits the outcomes settled leave; the rest stay as they are. A record whose every edit is
            // settled (a record pushed whole, the usual case) loses its edits by one range of the primary key,
            // the others edit by edit: one statement each for the batch.
            let split = Self.settledEdits(settled, held: batch.edits)
            if !split.wholeRecords.isEmpty {
                try db.execute(sql: "DELETE FROM record_edits WHERE record_id IN (SELECT value FROM json_each(?))",
                    arguments: [JSONWriter.array(of: split.wholeRecords)])
            }
            if !split.edits.isEmpty {
                try db.execute(sql: """
                    DELETE FROM record_edits WHERE (record_id, key) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
                    """, arguments: [Self.pairsJSON(split.edits) { $0.string($1) }])
            }
            try Self.stopRefusedUploads(db, refused)
            try Self.observe(db, serverClock)
            return conflicts
        }
    }

    /// The `settled` edits (record, field key) split into the records that hold no other edit (`held`: each record's
    /// edits), removed whole, and the edits of the others, removed one by one.
    static func settledEdits(
        _ settled: [(record: String, key: String)], held: [String: Set<String>]
    ) -> (wholeRecords: [String], edits: [(record: String, key: String)]) {
        var byRecord: [String: [String]] = [:]
        var order: [String] = []
        for (record, key) in settled {
            if byRecord[record] == nil { order.append(record) }
            byRecord[record, default: []].append(key)
        }
        var whole: [String] = []
        var edits: [(record: String, key: String)] = []
        for record in order {
            let keys = byRecord[record]!
            if let holds = held[record], !holds.isEmpty, holds.isSubset(of: keys) {
                whole.append(record)
            } else {
                for key in keys { edits.append((record, key)) }
            }
        }
        return (whole, edits)
    }

    /// What applying a batch of outcomes reads once for all of its records: their synced fields (opened, and as
    /// stored: sealed in an encrypted store) and revision, and the fields edited again since their mutations were
    /// frozen (outbox rows left after the acknowledged ones went).
    struct SettlingBatch {
        var records: [String: (fields: String, revision: Int64, stored: String)] = [:]
        var editedSince: [String: Set<String>] = [:]
        /// The keys of each record's unsent edits (read without their values).
        var edits: [String: Set<String>] = [:]
        /// Whether the device holds the plaintext of any answer it sealed (else nothing needs restoring).
        var holdsSealedPlaintexts: Bool

        init(_ db: Database, records ids: [String]) throws {
            let list = JSONWriter.array(of: ids)
            // Prepared per batch, not cached (as the freeze's reads).
            let rows = try Row.fetchCursor(db, sql: """
                SELECT id, server_revision, fs_open_fields(fields, 'record', id), fields FROM records WHERE id IN (SELECT value FROM json_each(?))
                """, arguments: [list])
            while let row = try rows.next() { records[row[0]] = (row[2], row[1], row[3]) }
            let newer = try Row.fetchCursor(db, sql: """
                SELECT record_id, field_id FROM outbox WHERE record_id IN (SELECT value FROM json_each(?)) AND field_id IS NOT NULL
                """, arguments: [list])
            while let row = try newer.next() { editedSince[row[0], default: []].insert(row[1]) }
            let keys = try Row.fetchCursor(db, sql: """
                SELECT record_id, key FROM record_edits WHERE record_id IN (SELECT value FROM json_each(?))
                """, arguments: [list])
            while let row = try keys.next() { edits[row[0], default: []].insert(row[1]) }
            holdsSealedPlaintexts = try DraftStore.holdsSealedPlaintexts(db)
        }
    }

    /// Applies one outcome to `record`, whose frozen `mutation` and acknowledged outbox rows are gone
    /// already: the values that won, the revision, the conflicts. The edits it settled are added to `settled`
    /// and the refusals to `refused`, for the caller to remove and stop once for the batch.
    static func applyOutcome(
        _ db: Database, _ outcome: MutationOutcome, record: String, mutation: Mutation, batch: SettlingBatch, device: String,
        settled: inout [(record: String, key: String)], refused: inout [DeviceSync.LoggedConflict]
    ) throws -> Int {
        guard let stored = batch.records[record] else { return 0 }
        let synced = try decodeSynced(stored.fields, record: record)
        let result = DeviceSync.applyOutcome(
            outcome, of: mutation, synced: synced, serverRevision: stored.revision,
            editedSince: batch.editedSince[record] ?? [], device: device)
        for (field, base) in result.rebasedEdits {
            try db.cachedStatement(sql: "UPDATE outbox SET base_revision = max(base_revision, ?) WHERE record_id = ? AND field_id = ?")
                .execute(arguments: [base, record, field])
        }
        let now = nowMillis()
        for conflict in result.conflicts {
            try logConflict(
                db, record: record, field: conflict.field, policy: conflict.policy,
                local: try ownPlaintext(db, record: record, key: conflict.field, conflict.local),
                remote: try ownPlaintext(db, record: record, key: conflict.field, conflict.remote), open: conflict.open, now: now, reason: conflict.reason)
        }
        let fields = try keepingSealedAnswers(result.synced.jsonBytes(), stored: stored.stored, before: synced, after: result.synced, record: record)
        try db.cachedStatement(sql: "UPDATE records SET fields = fs_seal_fields(?1, 'record', ?3), server_revision = ?2 WHERE id = ?3").execute(arguments: [
            String(decoding: fields, as: UTF8.self), result.serverRevision, record,
        ])
        if batch.holdsSealedPlaintexts { try restoreSealedPlaintexts(db, record: record) }
        for key in result.settled { settled.append((record, key)) }
        refused += result.conflicts.filter { $0.policy == "rejected" }
        return result.conflicts.count
    }

    /// A record's new fields JSON (`fields`, answers in clear) with each answer the outcome left as it was (the same
    /// value in `before` and `after`) taken sealed, exactly as `stored` holds it: `fs_seal_fields` keeps a sealed
    /// answer as it is, so only the answers that changed are sealed, and an unchanged one is never sealed again.
    /// A place is the record and the field's key, the same before and after, so the moved bytes open where they
    /// land. In a store without encryption (`stored` holds no sealed answer) `fields` is returned as it is.
    static func keepingSealedAnswers(_ fields: [UInt8], stored: String, before: RecordFields, after: RecordFields, record: String) throws -> [UInt8] {
        let unchanged = before.states.compactMap { key, state in after[key].map { $0.value == state.value && state.value != nil } == true ? key : nil }
        guard !unchanged.isEmpty else { return fields }
        let keep = Set(unchanged)
        let storedBytes = Array(stored.utf8)
        var sealed: [String: ArraySlice<UInt8>] = [:]
        do {
            var reader = JSONReader(storedBytes)
            try reader.beginObject()
            while let member = try reader.nextKey() {
                guard member == "values" else {
                    _ = try reader.skipValue()
                    continue
                }
                try reader.beginObject()
                while let key = try reader.nextKey() {
                    let raw = try reader.rawValue()
                    if raw.first == UInt8(ascii: "\""), keep.contains(key) { sealed[key] = raw }
                }
            }
        } catch {
            throw DraftStoreError(.databaseDamaged, "The stored fields of record \(record) cannot be read (\(error)).")
        }
        guard !sealed.isEmpty else { return fields }
        return try DeviceCipher.rewriteValues(fields) { key, raw, writer in writer.raw(sealed[key] ?? raw) }
    }

    static func logConflict(
        _ db: Database, record: String, field: String, policy: String, local: FieldState?, remote: FieldState?, open: Bool, now: Int64,
        reason: String? = nil, serverID: Int64? = nil
    ) throws {
        func json(_ value: AnswerValue?) throws -> String? { value.map { answerJSON($0) } }
        try db.cachedStatement(sql: """
            INSERT INTO conflicts (
                record_id, field_id, policy, local_value, local_hlc, local_device, remote_value, remote_hlc, remote_device, detected_at, resolved_at,
                reason, server_id)
            VALUES (?1, ?2, ?3, fs_seal(?4, 'conflict', ?1, ?2, 'local'), ?5, ?6, fs_seal(?7, 'conflict', ?1, ?2, 'remote'), ?8, ?9, ?10, ?11,
                fs_seal(?12, 'conflict', ?1, ?2, 'reason'), ?13)
            """).execute(arguments: [
                record, field, policy, try json(local?.value), local?.hlc.rawValue, local?.clientID,
                try json(remote?.value), remote?.hlc.rawValue, remote?.clientID, now, open ? nil : now, reason, serverID,
            ])
    }

    /// Stops the uploads of attachments the server refused in `conflicts`, unless a record still holds them:
    /// their upload would be refused too (too large, not accepted), and retrying it would keep the device
    /// waiting forever. The bytes stay on the device while the conflict log refers to them. Run after the
    /// outcome's edits are settled. (A hash in a record's text counts as holding it: the upload then goes on as
    /// before, which is the safe side.)
    static func stopRefusedUploads(_ db: Database, _ conflicts: [DeviceSync.LoggedConflict]) throws {
        for conflict in conflicts where conflict.policy == "rejected" {
            guard case .attachment(let reference)? = conflict.local?.value else { continue }
            try db.cachedStatement(sql: """
                UPDATE blobs SET upload = 'none', retry_at = NULL WHERE sha256 = ?1 AND upload = 'waiting'
                    AND NOT EXISTS (SELECT 1 FROM records WHERE instr(fs_open_fields(fields, 'record', id), ?1) > 0)
                    AND NOT EXISTS (SELECT 1 FROM record_edits WHERE instr(fs_open(value, 'edit', record_id, key), ?1) > 0)
                """).execute(arguments: [reference.sha256])
        }
    }

    /// Moves the device's hybrid logical clock past the server's reading, in the caller's transaction.
    static func observe(_ db: Database, _ remote: HybridTimestamp) throws {
        let current = try Int64.fetchOne(db.cachedStatement(sql: "SELECT clock FROM sync_state WHERE id = 1")) ?? 0
        var clock = HybridLogicalClock(last: HybridTimestamp(rawValue: current))
        clock.observe(remote)
        try db.cachedStatement(sql: "UPDATE sync_state SET clock = ? WHERE id = 1").execute(arguments: [clock.last.rawValue])
    }
}

import Foundation
import FormModel
import GRDB
package import SyncCore

/// A record's coalesced changes, frozen with their mutation id before being sent.
package struct OutgoingMutation: Sendable, Hashable {
    package var mutationID: String
    package var recordID: UUID
    /// The mutation as JSON, exactly as it is sent every time (same id, same content).
    package var body: String
}

/// The next mutations to push, and the records held back from them.
package struct OutgoingBatch: Sendable, Hashable {
    /// The mutations to send, frozen.
    package var mutations: [OutgoingMutation] = []
    /// Records not frozen because an answer of a sensitive field cannot be sealed (the device has no project
    /// key): their edits stay queued, and the next batch after the key arrives sends them.
    package var held: [UUID] = []
    /// Why the first of ``held`` was held, as the store said it.
    package var heldReason: String?
    /// This device's signature of the batch (base64 Ed25519, ``DeviceSigningKey``) over its ``PushManifest``: the
    /// SHA-256 of each of ``mutations``' bodies, in order; nil when the batch is empty. Made for exactly these
    /// mutations, so a retry that sends another set signs again.
    package var signature: String?
}

extension DraftStore {
    /// How many records have changes waiting to be sent (``SyncStatus/queuedRecords`` alone: what a sync
    /// reports with each request, without the rest of the status).
    package func queuedRecordCount() async throws -> Int {
        try await read(doing: "counting queued changes") { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT count(DISTINCT record_id) FROM outbox")) ?? 0
        }
    }

    /// The next mutations to push, at most `limit` (``prepareOutgoingBatch(limit:)`` without the records it
    /// held back).
    package func prepareOutgoing(limit: Int) async throws -> [OutgoingMutation] {
        try await prepareOutgoingBatch(limit: limit).mutations
    }

    /// The next mutations to push, at most `limit`: first those already frozen by an earlier attempt (a
    /// crash or a lost response), then one new mutation per record with unsent edits. New ones are frozen
    /// (id and body committed) in this call, before anything is sent.
    ///
    /// A record's pending edits become one mutation: every field it touched, with its current value, the
    /// oldest base revision among those edits (so the server sees every change made since the device last
    /// saw the field) and the newest clock reading.
    ///
    /// The batch is signed once with the device's signing key (``OutgoingBatch/signature``), over the digests of
    /// the mutations' bodies (their canonical bytes, ``Mutation/jsonBytes()``) in the order they are sent.
    ///
    /// A record with an answer of a sensitive field that cannot be sealed (no project key yet) is not frozen:
    /// it is listed in ``OutgoingBatch/held`` and its edits stay queued, while the other records go out.
    package func prepareOutgoingBatch(limit: Int) async throws -> OutgoingBatch {
        try await write(doing: "preparing changes to send") { db in
            var batch = OutgoingBatch()
            let signingKey = try Self.signingKey(db)
            let frozen = try Row.fetchAll(db, sql: "SELECT mutation_id, record_id, fs_open(body, 'mutation', mutation_id, record_id) FROM sent_mutations ORDER BY created_at, rowid LIMIT ?", arguments: [limit])
            for row in frozen {
                batch.mutations.append(OutgoingMutation(mutationID: row[0], recordID: UUID(uuidString: row[1]) ?? UUID(), body: row[2]))
            }
            let now = Self.nowMillis()
            var sensitive: [FormKey: Set<String>] = [:]
            var held: [String] = []
            while batch.mutations.count < limit {
                let candidates = try Row.fetchAll(db, sql: """
                    SELECT record_id, max(mutation_id) FROM outbox o
                    WHERE NOT EXISTS (SELECT 1 FROM sent_mutations s WHERE s.record_id = o.record_id)
                        AND record_id NOT IN (SELECT value FROM json_each(?))
                    GROUP BY record_id ORDER BY min(mutation_id) LIMIT ?
                    """, arguments: [JSONWriter.array(of: held), limit - batch.mutations.count])
                guard !candidates.isEmpty else { break }
                // The candidates' records and outbox rows, read in one statement each for all of them.
                let reads = try FreezingBatch(db, records: candidates.map { ($0[0], $0[1]) })
                for candidate in candidates {
                    let record: String = candidate[0]
                    do {
                        guard let form = reads.records[record]?.form,
                            try !Self.sensitiveFieldIDs(db, form, cache: formCache, sensitive: &sensitive).isEmpty
                        else {
                            // Nothing to seal: nothing can hold the record back.
                            if let frozen = try Self.freeze(db, record: record, upTo: candidate[1], reads: reads, now: now, cache: formCache, sensitive: &sensitive) {
                                batch.mutations.append(frozen)
                            }
                            continue
                        }
                        // A savepoint each: a record held back leaves nothing of its sealing behind.
                        try db.inSavepoint {
                            if let frozen = try Self.freeze(db, record: record, upTo: candidate[1], reads: reads, now: now, cache: formCache, sensitive: &sensitive) {
                                batch.mutations.append(frozen)
                            }
                            return .commit
                        }
                    } catch let error as DraftStoreError where error.code == .noProjectKey {
                        held.append(record)
                        batch.held.append(UUID(uuidString: record) ?? UUID())
                        if batch.heldReason == nil { batch.heldReason = error.message }
                    }
                }
            }
            if !batch.mutations.isEmpty {
                let manifest = PushManifest(canonical: batch.mutations.map { Array($0.body.utf8) })
                batch.signature = signingKey.signature(for: manifest.bytes)
            }
            return batch
        }
    }

    /// Freezes a record's outbox rows up to `lastRow` as one mutation (id and body committed in the caller's
    /// transaction), against the form version the record is on now; nil (and the rows gone) when the record no
    /// longer exists. The caller makes sure the record has no frozen mutation yet. The push that sends it signs
    /// its bytes (``OutgoingBatch/signature``). `reads` holds the record and its rows when the caller read a
    /// batch of them at once; without, they are read here.
    static func freeze(
        _ db: Database, record: String, upTo lastRow: Int64, reads: FreezingBatch? = nil, now: Int64, cache: FormCache,
        sensitive: inout [FormKey: Set<String>]
    ) throws -> OutgoingMutation? {
        let reads = try reads ?? FreezingBatch(db, records: [(record, lastRow)])
        guard var mutation = try coalesce(record: record, reads) else {
            // The record is gone (a never-synced draft deleted): nothing to send.
            try db.execute(sql: "DELETE FROM outbox WHERE record_id = ? AND mutation_id <= ?", arguments: [record, lastRow])
            return nil
        }
        try sealSensitiveAnswers(db, &mutation, cache: cache, sensitive: &sensitive)
        let bytes = mutation.jsonBytes()
        let body = String(decoding: bytes, as: UTF8.self)
        try db.cachedStatement(sql: """
            INSERT INTO sent_mutations (mutation_id, record_id, last_outbox_id, body, created_at)
            VALUES (?1, ?2, ?3, fs_seal(?4, 'mutation', ?1, ?2), ?5)
            """).execute(arguments: [mutation.mutationID, record, lastRow, body, now])
        return OutgoingMutation(mutationID: mutation.mutationID, recordID: mutation.recordID, body: body)
    }

    /// The ids of the sensitive fields of `form` (kept in `sensitive`, as ``sealSensitiveAnswers(_:_:cache:sensitive:)`` keeps them).
    static func sensitiveFieldIDs(_ db: Database, _ form: FormKey, cache: FormCache, sensitive: inout [FormKey: Set<String>]) throws -> Set<String> {
        if let known = sensitive[form] { return known }
        let ids = Set(try loadForm(db, id: form.id, version: form.version, cache: cache).everyField.filter(\.sensitive).map(\.id))
        sensitive[form] = ids
        return ids
    }

    /// What freezing a batch of records reads, in one statement each for all of them: each record's form, state,
    /// creation time and current answers (its synced fields under its unsent edits), and its outbox rows up to
    /// the last one its mutation covers, in the order they were made.
    struct FreezingBatch {
        struct Record {
            var form: FormKey
            var state: RecordState
            var createdAt: Int64
            var answers: [String: AnswerValue]
        }
        struct OutboxRow {
            var kind: String
            var field: String?
            var value: String?
            var baseRevision: Int64
            var hlc: Int64
            var madeAt: Int64
        }
        var records: [String: Record] = [:]
        var rows: [String: [OutboxRow]] = [:]

        init(_ db: Database, records candidates: [(record: String, upTo: Int64)]) throws {
            // Prepared per batch, not cached: a cached statement would keep the batch's list bound until the next.
            let found = try Row.fetchCursor(db, sql: """
                SELECT r.id, r.form_id, r.form_version, r.state, r.created_at, fs_open_fields(r.fields, 'record', r.id), \(DraftStore.localEditsJSON(of: "r.id"))
                FROM records r WHERE r.id IN (SELECT value FROM json_each(?))
                """, arguments: [JSONWriter.array(of: candidates.map(\.record))])
            while let row = try found.next() {
                let id: String = row[0]
                guard let state = RecordState(rawValue: row[3]) else {
                    throw DraftStoreError(.databaseDamaged, "The stored record \(id) cannot be read (bad state).")
                }
                let synced = try DraftStore.decodeSynced(row[5], record: id)
                let pending = try DraftStore.decodePending(row[6], record: id)
                records[id] = Record(
                    form: FormKey(id: row[1], version: row[2]), state: state, createdAt: row[4],
                    answers: DeviceSync.answers(synced: synced, local: pending))
            }
            // Driven by the list (a record's rows through `outbox_by_record`); each record's rows are put in the
            // order they were made here, without a sort of the whole batch in SQLite.
            let outbox = try Row.fetchCursor(db, sql: """
                SELECT o.record_id, o.mutation_id, o.kind, o.field_id, fs_open(o.value, 'outbox', o.record_id, coalesce(o.field_id, '')), o.base_revision, o.hlc, o.created_at
                FROM json_each(?) c CROSS JOIN outbox o ON o.record_id = json_extract(c.value, '$[0]') AND o.mutation_id <= json_extract(c.value, '$[1]')
                """, arguments: [DraftStore.pairsJSON(candidates) { $0.int($1) }])
            var made: [String: [(Int64, OutboxRow)]] = [:]
            while let row = try outbox.next() {
                made[row[0], default: []].append((row[1], OutboxRow(kind: row[2], field: row[3], value: row[4], baseRevision: row[5], hlc: row[6], madeAt: row[7])))
            }
            for (record, list) in made { rows[record] = list.sorted { $0.0 < $1.0 }.map(\.1) }
        }
    }

    /// The base revision of a new edit of `field` (``DeviceSync/editBase(pendingBase:serverRevision:)``):
    /// the oldest base among the field's unacknowledged outbox rows, a `create` that wrote it included.
    static func editBase(_ db: Database, record: String, field: String, serverRevision: Int64) throws -> Int64 {
        // Two index lookups (`outbox_by_record_field`): the field's own rows, and the rows without a field
        // (a `create` names its fields in its value; state changes name none).
        let pending = try Int64.fetchOne(db.cachedStatement(sql: """
            SELECT min(base) FROM (
                SELECT min(base_revision) AS base FROM outbox WHERE record_id = ?1 AND field_id = ?2
                UNION ALL
                SELECT min(base_revision) FROM outbox
                WHERE record_id = ?1 AND field_id IS NULL AND kind = 'create' AND json_type(fs_open(value, 'outbox', record_id, ''), ?3) IS NOT NULL)
            """), arguments: [record, field, "$.\"\(field)\""])
        return DeviceSync.editBase(pendingBase: pending, serverRevision: serverRevision)
    }

    /// One mutation from a record's outbox rows as `reads` holds them (``DeviceSync/coalesce(_:answers:state:)``);
    /// nil when the record no longer exists. Its times are this device's: the record's creation (or first
    /// arrival here), the latest of the rows' edits, and the latest submission among them.
    static func coalesce(record: String, _ reads: FreezingBatch) throws -> Mutation? {
        guard let id = UUID(uuidString: record), let stored = reads.records[record] else { return nil }
        var entries: [DeviceSync.OutboxEntry] = []
        var times = RecordTimes(created: date(stored.createdAt))
        for row in reads.rows[record] ?? [] {
            let madeAt = date(row.madeAt)
            times.updated = max(times.updated ?? madeAt, madeAt)
            if row.kind == "submit" { times.submitted = madeAt }
            var fields: [String] = []
            switch row.kind {
            case "set":
                if let field = row.field { fields = [field] }
            case "create":
                if let json = row.value { fields = try fieldNames(json: json) }
            default:
                break
            }
            entries.append(DeviceSync.OutboxEntry(fields: fields, baseRevision: row.baseRevision, hlc: HybridTimestamp(rawValue: row.hlc)))
        }
        return Mutation(
            mutationID: UUID().uuidString.lowercased(), recordID: id, form: stored.form,
            state: stored.state, changes: DeviceSync.coalesce(entries, answers: stored.answers, state: stored.state), times: times)
    }

    /// The keys of a stored object of answers (a `create` row's value), without reading the answers.
    static func fieldNames(json: String) throws -> [String] {
        var reader = JSONReader(Array(json.utf8))
        var names: [String] = []
        try reader.beginObject()
        while let name = try reader.nextKey() {
            names.append(name)
            _ = try reader.skipValue()
        }
        try reader.finish()
        return names
    }

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
    /// - Returns: how many conflicts the outcomes reported.
    @discardableResult
    package func applyOutcomes(_ outcomes: [MutationOutcome], serverClock: HybridTimestamp) async throws -> Int {
        try await unsyncedWrite(doing: "applying the server's answer to a push") { db in
            var conflicts = 0
            let device = try String.fetchOne(db, sql: "SELECT device_id FROM sync_state WHERE id = 1") ?? "unknown-device"
            // The frozen mutations the outcomes answer, read in one statement; then they and the outbox rows they
            // cover leave, in one statement each (a record has one frozen mutation at most, so what each
            // outcome reads next is the same as if its own rows had left alone).
            let ids = JSONWriter.array(of: outcomes.map(\.mutationID))
            var sent: [String: (record: String, body: String)] = [:]
            var records: [String] = []
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT mutation_id, record_id, fs_open(body, 'mutation', mutation_id, record_id) FROM sent_mutations WHERE mutation_id IN (SELECT value FROM json_each(?))
                """), arguments: [ids])
            while let row = try rows.next() {
                sent[row[0]] = (row[1], row[2])
                records.append(row[1])
            }
            guard !sent.isEmpty else {
                try Self.observe(db, serverClock)
                return 0
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
                guard let frozen = sent.removeValue(forKey: outcome.mutationID) else { continue }
                conflicts += try Self.applyOutcome(db, outcome, record: frozen.record, body: frozen.body, batch: batch, device: device, settled: &settled, refused: &refused)
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

    /// `[[record, second], …]` as JSON, for one statement over a batch (read with `json_each`): each pair's second
    /// element written by `second` (an outbox limit, a field key).
    static func pairsJSON<Second>(_ pairs: [(record: String, Second)], second: (inout JSONWriter, Second) -> Void) -> String {
        var writer = JSONWriter(capacity: pairs.count * 60 + 2)
        writer.beginArray()
        for pair in pairs {
            writer.element()
            writer.beginArray()
            writer.element()
            writer.string(pair.record)
            writer.element()
            second(&writer, pair.1)
            writer.endArray()
        }
        writer.endArray()
        return String(decoding: writer.bytes, as: UTF8.self)
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

    /// Applies one outcome to `record`, whose frozen mutation (`body`) and acknowledged outbox rows are gone
    /// already: the values that won, the revision, the conflicts. The edits it settled are added to `settled`
    /// and the refusals to `refused`, for the caller to remove and stop once for the batch.
    static func applyOutcome(
        _ db: Database, _ outcome: MutationOutcome, record: String, body: String, batch: SettlingBatch, device: String,
        settled: inout [(record: String, key: String)], refused: inout [DeviceSync.LoggedConflict]
    ) throws -> Int {
        guard let stored = batch.records[record] else { return 0 }
        var reader = JSONReader(Array(body.utf8))
        let mutation = try Mutation.read(from: &reader)
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

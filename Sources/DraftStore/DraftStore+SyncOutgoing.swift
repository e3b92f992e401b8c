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
    /// The mutation ``body`` holds, when the call that returned it froze it (nil for one frozen by an earlier
    /// attempt). Given back with the outcomes (``DraftStore/applyOutcomes(_:serverClock:sent:)``), it spares
    /// reading the body again; without it the body is read.
    package var mutation: Mutation?
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
                batch.mutations.append(OutgoingMutation(mutationID: row[0], recordID: UUID(text: row[1]) ?? UUID(), body: row[2]))
            }
            let now = Self.nowMillis()
            var ids = MutationIDs(count: limit - batch.mutations.count)
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
                            if let frozen = try Self.freeze(db, record: record, upTo: candidate[1], reads: reads, now: now, ids: &ids, cache: formCache, sensitive: &sensitive) {
                                batch.mutations.append(frozen)
                            }
                            continue
                        }
                        // A savepoint each: a record held back leaves nothing of its sealing behind.
                        try db.inSavepoint {
                            if let frozen = try Self.freeze(db, record: record, upTo: candidate[1], reads: reads, now: now, ids: &ids, cache: formCache, sensitive: &sensitive) {
                                batch.mutations.append(frozen)
                            }
                            return .commit
                        }
                    } catch let error as DraftStoreError where error.code == .noProjectKey {
                        held.append(record)
                        batch.held.append(UUID(text: record) ?? UUID())
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
    /// batch of them at once; without, they are read here. The mutation's id is the next of `ids`.
    static func freeze(
        _ db: Database, record: String, upTo lastRow: Int64, reads: FreezingBatch? = nil, now: Int64, ids: inout MutationIDs, cache: FormCache,
        sensitive: inout [FormKey: Set<String>]
    ) throws -> OutgoingMutation? {
        let reads = try reads ?? FreezingBatch(db, records: [(record, lastRow)])
        guard var mutation = try coalesce(record: record, reads, id: &ids) else {
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
        return OutgoingMutation(mutationID: mutation.mutationID, recordID: mutation.recordID, body: body, mutation: mutation)
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

    /// One mutation from a record's outbox rows as `reads` holds them (``DeviceSync/coalesce(_:answers:state:)``),
    /// its id the next of `ids`; nil when the record no longer exists. Its times are this device's: the record's
    /// creation (or first arrival here), the latest of the rows' edits, and the latest submission among them.
    static func coalesce(record: String, _ reads: FreezingBatch, id ids: inout MutationIDs) throws -> Mutation? {
        guard let id = UUID(text: record), let stored = reads.records[record] else { return nil }
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
            mutationID: ids.next(), recordID: id, form: stored.form,
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
}

/// Fresh ids for the mutations one call freezes: random UUIDs (version 4, in lowercase, as `UUID()` makes them), their
/// bytes drawn from the system's generator 16 ids a call (``SystemRandomBytes``) rather than a file opened and
/// read for each id (Foundation's `UUID()` on Linux). The bytes are the kernel's, as before; none outlive the call.
struct MutationIDs {
    private var runs: SystemRandomBytes.Runs

    /// Ids for `count` mutations at most (more are drawn as they are needed).
    init(count: Int) {
        runs = SystemRandomBytes.Runs(size: 16, count: count)
    }

    /// The next id: 122 random bits no id before it used, as `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`.
    mutating func next() -> String {
        let drawn = runs.next()
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { $0.copyBytes(from: drawn) }
        bytes.6 = bytes.6 & 0x0F | 0x40  // the version, 4 (random)
        bytes.8 = bytes.8 & 0x3F | 0x80  // the variant of RFC 9562
        return UUID(uuid: bytes).lowercased
    }
}

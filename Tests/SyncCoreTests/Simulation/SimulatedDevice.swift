import Foundation
import FormModel
@testable import SyncCore

/// A device's half of the sync protocol in memory, doing what DraftStore does with its rows: every
/// decision is ``DeviceSync``'s (coalescing, outcomes, rebasing a pulled record), only the tables are
/// arrays and dictionaries here.
struct SimulatedDevice {
    /// An outbox row: one edit (`set`) or a new record's defaulted fields (`create`).
    struct OutboxRow {
        var id: Int64
        var record: UUID
        var isCreate: Bool
        /// The fields the row wrote, with the values it wrote.
        var values: FieldValues
        var baseRevision: Int64
        var hlc: HybridTimestamp
        /// What the device showed for each written field when the edit was made (`nil`: nothing).
        var seen: FieldValues
    }

    struct Record {
        var formVersion = 1
        var state = RecordState.draft
        var serverRevision: Int64 = 0
        var synced = RecordFields()
        var local: FieldValues = [:]

        var answers: [String: AnswerValue] { DeviceSync.answers(synced: synced, local: local) }
    }

    /// A mutation frozen before it was first sent: retries send it unchanged.
    struct Sent {
        var mutation: Mutation
        var lastRow: Int64
    }

    let id: String
    let skewMillis: Int64
    var clock = HybridLogicalClock()
    var records: [UUID: Record] = [:]
    var outbox: [OutboxRow] = []
    var nextRow: Int64 = 1
    var nextMutation = 1
    var sent: [Sent] = []
    var cursor: Int64 = 0
    /// Push responses on their way back, applied by a later step (or lost).
    var responses: [PushResponse] = []
    var conflicts: [DeviceSync.LoggedConflict] = []

    init(id: String, skewMillis: Int64) {
        self.id = id
        self.skewMillis = skewMillis
    }

    /// A new record with defaulted fields, queued as a `create` row.
    mutating func create(_ record: UUID, defaults: FieldValues, now: Int64) {
        let hlc = clock.tick(wallMillis: now + skewMillis)
        records[record] = Record(local: defaults)
        outbox.append(OutboxRow(id: nextRow, record: record, isCreate: true, values: defaults, baseRevision: 0, hlc: hlc, seen: [:]))
        nextRow += 1
    }

    /// One edit, as `DraftStore.writeEdit`: on top of the synced fields, based as ``DeviceSync/editBase(pendingBase:serverRevision:)`` says.
    mutating func edit(_ record: UUID, field: String, to value: AnswerValue?, now: Int64) {
        guard var stored = records[record], stored.state != .deleted else { return }
        let hlc = clock.tick(wallMillis: now + skewMillis)
        let seen: FieldValues = [field: stored.answers[field]]
        stored.local[field] = .some(value)
        let pendingBase = outbox.filter { $0.record == record && $0.values.keys.contains(field) }.map(\.baseRevision).min()
        let base = DeviceSync.editBase(pendingBase: pendingBase, serverRevision: stored.serverRevision)
        outbox.append(OutboxRow(id: nextRow, record: record, isCreate: false, values: [field: value], baseRevision: base, hlc: hlc, seen: seen))
        nextRow += 1
        records[record] = stored
    }

    /// What `DraftStore.prepareOutgoing` does: frozen mutations first, then one new mutation per record
    /// with unsent rows and nothing in flight, frozen before it is sent.
    /// - Parameter frozen: called for each newly frozen mutation with the rows it covers.
    mutating func prepareOutgoing(limit: Int, frozen: (Mutation, [OutboxRow]) -> Void) -> [Mutation] {
        var batch = sent.prefix(limit).map(\.mutation)
        guard batch.count < limit else { return batch }
        let inFlight = Set(sent.map(\.mutation.recordID))
        var candidates: [(record: UUID, first: Int64, last: Int64)] = []
        for row in outbox where !inFlight.contains(row.record) {
            if let index = candidates.firstIndex(where: { $0.record == row.record }) {
                candidates[index].last = max(candidates[index].last, row.id)
            } else {
                candidates.append((row.record, row.id, row.id))
            }
        }
        for candidate in candidates.sorted(by: { $0.first < $1.first }).prefix(limit - batch.count) {
            guard let stored = records[candidate.record] else { continue }
            let rows = outbox.filter { $0.record == candidate.record && $0.id <= candidate.last }
            let entries = rows.map { DeviceSync.OutboxEntry(fields: Array($0.values.keys), baseRevision: $0.baseRevision, hlc: $0.hlc) }
            let mutation = Mutation(
                mutationID: "\(id)-m\(nextMutation)", recordID: candidate.record, form: FormKey(id: "form", version: stored.formVersion),
                state: stored.state, changes: DeviceSync.coalesce(entries, answers: stored.answers, state: stored.state))
            nextMutation += 1
            // Sent as bytes: what the server gets is what the device's writer wrote.
            var reader = JSONReader(mutation.jsonBytes())
            let wire = (try? Mutation.read(from: &reader)) ?? mutation
            sent.append(Sent(mutation: wire, lastRow: candidate.last))
            frozen(wire, rows)
            batch.append(wire)
        }
        return batch
    }

    /// What `DraftStore.applyOutcomes` does with one push response.
    mutating func applyResponse(_ response: PushResponse, now: Int64) {
        for outcome in response.outcomes {
            guard let index = sent.firstIndex(where: { $0.mutation.mutationID == outcome.mutationID }) else { continue }
            let frozen = sent.remove(at: index)
            let record = frozen.mutation.recordID
            outbox.removeAll { $0.record == record && $0.id <= frozen.lastRow }
            guard let stored = records[record] else { continue }
            let newer = Set(outbox.filter { $0.record == record && !$0.isCreate }.flatMap(\.values.keys))
            let result = DeviceSync.applyOutcome(
                outcome, of: frozen.mutation, synced: stored.synced, serverRevision: stored.serverRevision,
                editedSince: newer, device: id)
            for (field, base) in result.rebasedEdits {
                for index in outbox.indices where outbox[index].record == record && !outbox[index].isCreate && outbox[index].values[field] != nil {
                    outbox[index].baseRevision = max(outbox[index].baseRevision, base)
                }
            }
            conflicts += result.conflicts
            records[record]?.synced = result.synced
            for field in result.settled { records[record]?.local[field] = nil }
            records[record]?.serverRevision = result.serverRevision
        }
        clock.observe(response.serverClock, wallMillis: now + skewMillis)
    }

    /// What `DraftStore.applyPullPage` does with one page; returns whether the feed has more.
    mutating func applyPullPage(_ bytes: [UInt8], now: Int64) throws -> Bool {
        var pulled: [RecordEnvelope] = []
        let end = try PullPageReader.read(bytes) { pulled.append($0) }
        for record in pulled {
            let fields = try record.fields
            guard var stored = records[record.recordID] else {
                records[record.recordID] = Record(formVersion: record.form.version, state: record.state, serverRevision: record.revision, synced: fields)
                continue
            }
            guard DeviceSync.isNewer(pulledRevision: record.revision, than: stored.serverRevision) else { continue }
            let pending = DeviceSync.PendingWork(
                edits: outbox.contains { $0.record == record.recordID },
                stateChange: false,
                inFlight: sent.contains { $0.mutation.recordID == record.recordID })
            let rebase = DeviceSync.rebase(pulledState: record.state, under: pending)
            if !rebase.keepsLocalFormVersion { stored.formVersion = record.form.version }
            stored.state = rebase.state(local: stored.state, pulled: record.state)
            stored.serverRevision = record.revision
            stored.synced = fields
            if !rebase.keepsLocalEdits { stored.local = [:] }
            records[record.recordID] = stored
        }
        cursor = end.cursor
        clock.observe(end.serverClock, wallMillis: now + skewMillis)
        return end.hasMore && end.count > 0
    }
}

import Foundation
import FormModel
@testable import SyncCore

/// The server's half of the sync protocol in memory: records merged by ``RecordMerge`` (the server's own
/// merge), outcomes kept per `(clientId, mutationId)` so a retry gets the stored one, a change feed ordered
/// by sequence, and the conflict log. Only storage is simulated; every decision is the real code's.
struct SimulatedServer {
    struct Stored {
        var record: MergeableRecord
        var formVersion: Int
        var sequence: Int64
    }

    /// One logged conflict, with the record it belongs to.
    struct Logged {
        var record: UUID
        var entry: ConflictEntry
    }

    /// What one merge did to one field, for the checks of the simulation.
    struct FieldEffect {
        var record: UUID
        var field: String
        var before: FieldState?
        var after: FieldState?
        var change: FieldChange
        var conflict: ConflictEntry?
        var mutationID: String
        var clientID: String
    }

    let policies: [String: ConflictPolicy]
    var records: [UUID: Stored] = [:]
    var nextSequence: Int64 = 1
    var outcomes: [String: MutationOutcome] = [:]
    /// How many times each `(clientId, mutationId)` was merged (never more than once).
    var merges: [String: Int] = [:]
    /// How many merges changed each record: its revision must equal this.
    var changingMerges: [UUID: Int64] = [:]
    var log: [Logged] = []
    var clock = HybridLogicalClock()

    init(policies: [String: ConflictPolicy]) {
        self.policies = policies
    }

    /// Handles a push batch the way the server's planner does: a stored outcome for a mutation seen
    /// before, otherwise a merge whose outcome is stored.
    mutating func push(clientID: String, _ mutations: [Mutation], now: Int64, effects: (FieldEffect) -> Void) -> PushResponse {
        var answers: [MutationOutcome] = []
        for mutation in mutations {
            let key = "\(clientID)/\(mutation.mutationID)"
            if let stored = outcomes[key] {
                answers.append(stored)
                continue
            }
            merges[key, default: 0] += 1
            let current = records[mutation.recordID]?.record
            let merged = RecordMerge.merge(
                current: current, mutation: mutation, clientID: clientID, recordPolicy: .lastWriterWins,
                policy: { policies[$0] ?? .lastWriterWins })
            for (field, change) in mutation.changes {
                effects(FieldEffect(
                    record: mutation.recordID, field: field, before: current?.fields[field], after: merged.record.fields[field],
                    change: change, conflict: merged.conflicts.first { $0.fieldID == field }, mutationID: mutation.mutationID, clientID: clientID))
                clock.observe(change.hlc, wallMillis: now)
            }
            if merged.changed {
                records[mutation.recordID] = Stored(record: merged.record, formVersion: mutation.form.version, sequence: nextSequence)
                nextSequence += 1
                changingMerges[mutation.recordID, default: 0] += 1
            }
            log += merged.conflicts.map { Logged(record: mutation.recordID, entry: $0) }
            let lost = merged.conflicts.contains { $0.kind == .field && $0.winner == .server }
            let outcome = MutationOutcome(
                mutationID: mutation.mutationID, recordID: mutation.recordID, status: lost ? .merged : .applied,
                revision: merged.record.revision, conflicts: merged.conflicts, changed: merged.changed)
            outcomes[key] = outcome
            answers.append(outcome)
        }
        return PushResponse(outcomes: answers, serverClock: clock.tick(wallMillis: now))
    }

    /// One pull page: the records changed after `cursor`, in sequence order, at most `limit`, as the bytes
    /// a real page carries.
    mutating func page(after cursor: Int64, limit: Int, now: Int64) -> [UInt8] {
        let changed = records.filter { $0.value.sequence > cursor }.sorted { $0.value.sequence < $1.value.sequence }
        var writer = PullPageWriter()
        var end = cursor
        for (id, stored) in changed.prefix(limit) {
            writer.append(RecordEnvelope(
                recordID: id, form: FormKey(id: "form", version: stored.formVersion), state: stored.record.state,
                revision: stored.record.revision, sequence: stored.sequence, author: "someone", fields: stored.record.fields))
            end = stored.sequence
        }
        return writer.finish(cursor: end, hasMore: changed.count > limit, serverClock: clock.tick(wallMillis: now))
    }
}

import Foundation
import FormModel
import SyncCore
import Synchronization

/// Builds a push's webhook events from its committed plan, in the push's transaction: what both storage
/// backends write to their outbox. The body is made once, here, and sent byte for byte on every attempt.
///
/// Which change makes which event (docs/integrations.md, "Webhooks"):
/// - a device's change that submits a record: `record.submitted`; one that deletes it: `record.deleted`; any
///   other change of a shared (once submitted) record: `record.edited` (drafts stay private: no event);
/// - a review: `record.reviewed`; a resolution: `conflict.resolved`;
/// - a conflict the change logged open: `conflict.opened`, right after the change's own event;
/// - a record's entity change: `entity.created` or `entity.updated`.
///
/// Every event carries the record as the push left it (``StoredRecord`` in the wire's `RecordEnvelope`
/// shape, its fields as the stored `RecordFields` JSON) and what the change changed (``HistoryDetail``), both
/// copied from the JSON the push already encoded for its own rows, and the labels of the record's fields and
/// chosen values (``WebhookLabels``) from its form version.
package enum WebhookEvents {
    /// The events `plan` makes that some subscription wants, each with the endpoints that want it, in the
    /// order the changes were made.
    /// - Parameters:
    ///   - encoded: the plan's JSON columns (``PushPlan/encoding()``), reused for the bodies.
    ///   - conflictIds: the conflict log's ids of `plan.conflicts`, in order (empty when not known).
    ///   - labels: the labels of the form versions of `plan.records` (``formVersions(of:)``); a record whose
    ///     version is missing is sent without `labels`.
    package static func make(
        plan: PushPlan, encoded: PushPlan.Encoded, conflictIDs: [Int64], subscriptions: [WebhookSubscription], projectName: String,
        labels: [FormKey: WebhookLabels] = [:], at now: Date
    ) -> [(event: WebhookEvent, endpoints: [Int64])] {
        let wanted = subscriptions.reduce(into: Set<WebhookEventKind>()) { $0.formUnion($1.events) }
        guard !wanted.isEmpty else { return [] }
        var recordIndex: [UUID: Int] = [:]
        for (index, record) in plan.records.enumerated() { recordIndex[record.id] = index }
        var result: [(event: WebhookEvent, endpoints: [Int64])] = []
        func add(_ kind: WebhookEventKind, subject: String, _ body: (inout JSONWriter) -> Void) {
            let endpoints = subscriptions.filter { $0.events.contains(kind) }.map(\.endpointID)
            guard !endpoints.isEmpty else { return }
            let id = UUID().lowercased
            var writer = JSONWriter(capacity: 1024)
            writer.beginObject()
            writer.key("id")
            writer.string(id)
            writer.key("type")
            writer.string(kind.rawValue)
            writer.key("occurredAt")
            writer.int(RecordTimes.millis(now))
            writer.key("project")
            writer.string(projectName)
            body(&writer)
            writer.endObject()
            result.append((WebhookEvent(id: id, kind: kind, subject: subject, body: String(decoding: writer.bytes, as: UTF8.self)), endpoints))
        }
        func writeRecord(_ id: UUID, to writer: inout JSONWriter) {
            guard let index = recordIndex[id] else { return }
            let record = plan.records[index]
            writer.key("record")
            writer.beginObject()
            writer.key("recordId")
            writer.string(record.id.lowercased)
            writer.key("formId")
            writer.string(record.form.id)
            writer.key("formVersion")
            writer.int(record.form.version)
            writer.key("state")
            writer.string(record.state.rawValue)
            writer.key("revision")
            writer.int(record.revision)
            writer.key("sequence")
            writer.int(record.sequence)
            writer.key("author")
            writer.string(record.authorName)
            if let review = record.review {
                writer.key("review")
                review.write(to: &writer)
            }
            record.times.write(to: &writer)
            writer.key("fields")
            writer.raw(encoded.fields[index])
            labels[record.form]?.write(record.fields, to: &writer)
            writer.endObject()
        }
        func conflictOpened(_ conflictIndex: Int) {
            let conflict = plan.conflicts[conflictIndex]
            add(.conflictOpened, subject: conflict.recordID.lowercased) { writer in
                writer.key("conflict")
                writer.beginObject()
                if conflictIndex < conflictIDs.count {
                    writer.key("id")
                    writer.int(conflictIDs[conflictIndex])
                }
                writer.key("device")
                writer.string(conflict.clientID)
                writer.key("entry")
                writer.raw(encoded.conflicts[conflictIndex])
                writer.endObject()
                writeRecord(conflict.recordID, to: &writer)
            }
        }
        var conflictsByRecord: [UUID: [Int]] = [:]
        for (index, conflict) in plan.conflicts.enumerated() where conflict.entry.open {
            conflictsByRecord[conflict.recordID, default: []].append(index)
        }
        for (index, entry) in plan.history.enumerated() {
            let subject = entry.recordID.lowercased
            let kind: WebhookEventKind?
            switch entry.kind {
            case .change:
                let shared = recordIndex[entry.recordID].map { plan.records[$0].shared } ?? false
                if entry.detail.state?.to == .submitted, entry.detail.state?.from != .submitted {
                    kind = .recordSubmitted
                } else if entry.detail.state?.to == .deleted, entry.detail.state?.from != .deleted {
                    kind = shared ? .recordDeleted : nil
                } else {
                    kind = shared ? .recordEdited : nil
                }
            case .review: kind = .recordReviewed
            case .resolution: kind = .conflictResolved
            }
            if let kind {
                add(kind, subject: subject) { writer in
                    writer.key("changedBy")
                    writer.beginObject()
                    writer.key("userId")
                    writer.int(entry.userID)
                    if let clientID = entry.clientID {
                        writer.key("device")
                        writer.string(clientID)
                    }
                    writer.endObject()
                    if let resolution = entry.detail.resolution {
                        writer.key("conflict")
                        writer.beginObject()
                        writer.key("id")
                        writer.int(resolution.conflictID)
                        if let fieldID = resolution.fieldID {
                            writer.key("fieldId")
                            writer.string(fieldID)
                        }
                        writer.key("kept")
                        writer.string(resolution.kept.rawValue)
                        writer.endObject()
                    }
                    writer.key("changes")
                    writer.raw(encoded.history[index])
                    writeRecord(entry.recordID, to: &writer)
                }
            }
            // The conflicts this change logged, after its own event.
            if entry.kind == .change, let opened = conflictsByRecord.removeValue(forKey: entry.recordID) {
                for conflictIndex in opened { conflictOpened(conflictIndex) }
            }
        }
        // Conflicts of a change that changed nothing (the server's value stayed): no history entry of their own.
        for conflictIndex in conflictsByRecord.values.flatMap({ $0 }).sorted() { conflictOpened(conflictIndex) }
        let entities = Dictionary(plan.entities.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        for change in plan.entityHistory {
            let kind: WebhookEventKind
            switch change.kind {
            case .create: kind = .entityCreated
            case .update: kind = .entityUpdated
            case .import, .assign, .delete: continue
            }
            add(kind, subject: change.entityID.lowercased) { writer in
                if let recordID = change.recordID {
                    writer.key("recordId")
                    writer.string(recordID.lowercased)
                }
                writer.key("changes")
                writer.raw(change.detail.jsonBytes())
                if let entity = entities[change.entityID] {
                    writer.key("entity")
                    writer.beginObject()
                    writer.key("id")
                    writer.string(entity.id.lowercased)
                    writer.key("list")
                    writer.string(entity.list)
                    writer.key("revision")
                    writer.int(entity.revision)
                    writer.key("deleted")
                    writer.bool(entity.deleted)
                    writer.key("fields")
                    entity.fields.write(to: &writer)
                    writer.endObject()
                }
            }
        }
        return result
    }
}

extension WebhookEvents {
    /// The form versions whose labels the events of `plan` may carry: those of its records, each once.
    package static func formVersions(of plan: PushPlan) -> [FormKey] {
        var seen = Set<FormKey>()
        return plan.records.compactMap { record in
            seen.insert(record.form).inserted ? record.form : nil
        }
    }
}

/// Between this process's pushes and its webhook delivery service: wakes the service when a push committed
/// events, and hands it the deliveries the push claimed for it in its transaction, so a new event is sent as
/// soon as its commit is durable, without another write transaction to claim it.
///
/// A push claims only while a service is attached (``attach(lease:wake:)``) and never for an endpoint the
/// service has marked busy (``setBusy(_:)``: its deliveries wait in the outbox for the service's own claim). The
/// service takes what was handed to it with ``take()``. A hand-over is an append and a wake, nothing more: it
/// runs on the committing push's thread (on SQLite, the writer's, before the group's pushes are answered), so
/// the service's `wake` handler only signals the service's own thread.
public final class WebhookSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        /// Deliveries pushes claimed and handed over, not yet taken.
        var handed: [ClaimedWebhookDelivery] = []
        /// A push wrote events it did not claim (or a redelivery, a replay): the outbox has work to claim.
        var claimWanted = false
        /// How long a push's claim holds, while a service is attached.
        var lease: Duration?
        /// What wakes the attached service, called after each change (outside the lock).
        var wakeHandler: (@Sendable () -> Void)?
        var busy: Set<Int64> = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Wakes the waiting service (or the next one to wait): deliveries are due in the outbox.
    public func signal() {
        wake { $0.claimWanted = true }
    }

    /// Hands the service deliveries a push claimed for it (after that push's commit), and wakes it.
    public func hand(_ deliveries: [ClaimedWebhookDelivery]) {
        guard !deliveries.isEmpty else { return }
        wake { $0.handed.append(contentsOf: deliveries) }
    }

    /// After a push's commit, durable since `durable`: hands over the deliveries it claimed in its transaction,
    /// each stamped with when its commit was durable and when it was handed over (the delivery service's timing
    /// trace), and signals the outbox when it wrote deliveries it did not claim. What both storage backends do
    /// once a push is durable.
    public func committed(_ plan: PushPlan, durable: Date? = nil) {
        if plan.webhookDeliveries > plan.webhookClaims.count { signal() }
        guard !plan.webhookClaims.isEmpty else { return }
        let handed = Date()
        hand(plan.webhookClaims.map { delivery in
            var delivery = delivery
            delivery.committedAt = durable ?? delivery.committedAt ?? handed
            delivery.handedAt = handed
            return delivery
        })
    }

    /// Wakes the waiting service without news from the outbox (its own deliveries finished).
    public func wake() {
        wake { _ in }
    }

    private func wake(_ change: (inout State) -> Void) {
        let (waiter, handler) = state.withLock { state -> (CheckedContinuation<Void, Never>?, (@Sendable () -> Void)?) in
            change(&state)
            defer { state.waiter = nil }
            if state.waiter == nil { state.pending = true }
            return (state.waiter, state.wakeHandler)
        }
        handler?()
        waiter?.resume()
    }

    /// What was handed over since the last take, and whether the outbox has work a push did not hand over.
    public func take() -> (handed: [ClaimedWebhookDelivery], claimWanted: Bool) {
        state.withLock { state in
            defer {
                state.handed = []
                state.claimWanted = false
            }
            return (state.handed, state.claimWanted)
        }
    }

    /// A delivery service runs in this process: pushes claim the deliveries they write for it, for `lease`, and
    /// every hand-over or signal calls `wake` (when given) on the thread that made it; `wake` must return at
    /// once (the service's thread does the work).
    public func attach(lease: Duration, wake: (@Sendable () -> Void)? = nil) {
        state.withLock { state in
            state.lease = lease
            state.wakeHandler = wake
        }
    }

    /// The service stops: pushes claim nothing more, and its `wake` is no longer called. Returns what was handed
    /// over and not taken, for the service to give back.
    public func detach() -> [ClaimedWebhookDelivery] {
        state.withLock { state in
            state.lease = nil
            state.wakeHandler = nil
            defer { state.handed = [] }
            return state.handed
        }
    }

    /// The endpoints whose deliveries pushes leave in the outbox for now (a slow receiver's backlog).
    public func setBusy(_ endpoints: Set<Int64>) {
        state.withLock { $0.busy = endpoints }
    }

    /// What a push may claim now: until when, and the endpoints it may not claim for; nil when no service is
    /// attached.
    public func pushClaim(now: Date) -> (until: Date, busy: Set<Int64>)? {
        state.withLock { state in
            state.lease.map { (now.addingTimeInterval(Self.seconds($0)), state.busy) }
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Returns at the next signal, or at once when one came since the last wait, or when the calling task is
    /// cancelled. One waiter at a time.
    public func wait() async {
        await withTaskCancellationHandler {
            await suspend()
        } onCancel: {
            wake()
        }
    }

    private func suspend() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.pending {
                    state.pending = false
                    return true
                }
                state.waiter?.resume()
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}

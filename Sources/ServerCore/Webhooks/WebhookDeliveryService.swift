import Foundation
import Logging
import ServerStorage
import ServiceLifecycle
import Synchronization

/// Delivers the webhook outbox (``WebhookStorage``): posts each claimed delivery signed (``WebhookSignature``)
/// through ``WebhookSender`` and records the outcome, retrying failures with exponential backoff and jitter
/// (``WebhookOptions/retryAfter(attempts:from:)``). At least once: a delivery is marked delivered only after a
/// 2xx, so a crash between the two sends it again with the same event id.
///
/// Two loops share the work, so sending never waits for the database:
/// - **sending**, on the sender's threads (``WebhookSender``, libcurl's multi interface), not a Swift task: a
///   push of this process claims the deliveries it writes in its own transaction and hands them over
///   (``WebhookSignal``) once its commit is durable, which only pokes the first; its turn queues them in memory
///   by endpoint and starts each as soon as its endpoint has fewer than
///   ``WebhookOptions/deliveriesInFlightPerEndpoint`` under way, a whole burst at once: the turn only picks what
///   starts and deals it to the sender's threads, each of which signs its share and adds the transfers to its
///   multi handle (on kept connections), so a burst's per-attempt work is not one thread's.
///   A push hands over to an endpoint with every slot taken too: its delivery waits in that endpoint's queue, not
///   in the outbox for the next claim. Each delivery frees its slot when it ends (on that thread, which then runs
///   the next turn), so a slow answer holds up no other delivery: its transfer just sits in the multi handle.
///   Nothing between a hand-over and its attempt waits for Swift's cooperative threads, which the pushes keep
///   busy, and this loop touches no database.
/// - **bookkeeping**: one write transaction at a time records every outcome that came in since the last one,
///   gives back claims not attempted, and claims what the pushes did not hand over (retries that came due, an
///   event that waited behind an earlier one of its record, events other instances wrote), whenever the
///   sending loop asks for it, an outcome was delivered (its record's next event may now go), or every
///   ``WebhookOptions/pollInterval``. When a claim comes back full (a backlog), it claims again at once, up to
///   ``WebhookOptions/batchesInFlightPerEndpoint`` batches.
///
/// The storage hands out a record's next event only once the one before it was delivered, so every queued
/// delivery may go out at once and each receiver still gets a record's events in order. An endpoint with
/// ``WebhookOptions/queuedPerEndpoint`` deliveries waiting in memory is marked busy: pushes leave its deliveries
/// in the outbox and claims leave it out, so a slow or dead receiver holds up only itself, and holds a bounded
/// number of bodies and leases. A queued delivery whose claim would run out before an attempt could end is given
/// back rather than sent.
package struct WebhookDeliveryService: Service {
    let storage: any ServerStorage
    let options: WebhookOptions
    let logger: Logger

    package init(storage: any ServerStorage, options: WebhookOptions, logger: Logger) {
        self.storage = storage
        self.options = options
        self.logger = logger
    }

    /// How long a claim holds: one attempt, with room to record the outcomes.
    var lease: Duration { options.timeout + .seconds(30) }

    /// Runs until the server shuts down; deliveries under way finish (each bounded by the timeout) and their
    /// outcomes are recorded; claims not attempted are given back.
    package func run() async throws {
        guard options.deliver else { return }
        let signal = storage.webhookSignal
        let state = DeliveryState()
        let bookkeeping = WebhookSignal()
        let sender = WebhookSender(
            options: options, keepPerURL: options.deliveriesInFlightPerEndpoint, name: "fs-webhook-send", interval: options.pollInterval)
        let signers = Signers()
        sender.start {
            dispatch(state, signal: signal, bookkeeping: bookkeeping, sender: sender, signers: signers)
        }
        signal.attach(lease: lease, wake: { sender.poke() })
        await withDiscardingTaskGroup { group in
            group.addTask { await keepBooks(state, wake: bookkeeping, sending: signal) }
            try? await gracefulShutdown()  // or cancellation
            // Shutting down: pushes claim nothing more; what was handed over or queued goes back.
            await sender.stop()
            state.enqueue(signal.detach())
            state.stop()
            bookkeeping.wake()
        }
    }

    /// One turn on the sender's thread: queues what pushes handed over, starts each queued delivery whose endpoint
    /// has a free slot (a transfer added to the sender's multi handle), marks endpoints with a full queue busy,
    /// and wakes the bookkeeping loop when it has work. Each attempt, once it ended, frees its slot and wakes the
    /// bookkeeping on the sender's thread, which then runs the next turn (the endpoint's next delivery may start).
    private func dispatch(
        _ state: DeliveryState, signal: WebhookSignal, bookkeeping: WebhookSignal, sender: WebhookSender, signers: Signers
    ) {
        let (handed, claimWanted) = signal.take()
        state.enqueue(handed)
        if claimWanted {
            state.wantClaim()
            bookkeeping.wake()
        }
        // The turn only picks what starts; the sender's threads sign and add their share of it.
        let requests = state.startDeliveries(options: options, now: Date()).map { delivery, taken in
            let signer = signers.signer(endpoint: delivery.endpointID, secret: delivery.secret)
            return request(delivery, taken: taken, signer: signer) { outcome in
                state.finished(delivery.endpointID, outcome: (delivery.id, outcome))
                bookkeeping.wake()
            }
        }
        sender.begin(requests)
        signal.setBusy(state.busy(options: options))
        if state.releasesWaiting { bookkeeping.wake() }
    }

    /// The bookkeeping loop: one write transaction at a time, until the service stopped and every delivery under
    /// way was recorded.
    private func keepBooks(_ state: DeliveryState, wake: WebhookSignal, sending: WebhookSignal) async {
        var lastPoll = ContinuousClock.now
        var deep = false
        while !Task.isCancelled {
            let poll = ContinuousClock.now - lastPoll >= options.pollInterval
            if poll { lastPoll = .now }
            let turn = state.takeTurn(poll: poll || deep, options: options)
            let limit = turn.claim ? options.batchSize * (deep ? options.batchesInFlightPerEndpoint : 1) : 0
            var claimed: [ClaimedWebhookDelivery] = []
            if !turn.outcomes.isEmpty || !turn.releases.isEmpty || limit > 0 {
                do {
                    claimed = try await storage.claimWebhookDeliveries(
                        finishing: turn.outcomes, releasing: turn.releases, now: Date(), lease: lease, limit: limit, excluding: turn.busy)
                } catch {
                    // The claims' lease runs out and the deliveries are sent again: at least once.
                    logger.warning("Webhook delivery outcomes could not be stored or deliveries claimed; trying again", metadata: [
                        "deliveries": .string(turn.outcomes.map { String($0.id) }.joined(separator: ",")), "error": .string("\(error)"),
                    ])
                }
            }
            deep = limit > 0 && claimed.count >= limit
            if !claimed.isEmpty {
                state.enqueue(claimed)
                sending.wake()
            }
            if state.done { return }
            // Once stopped, only the deliveries still under way wake it (shutdown is no news any more).
            if !deep { await wait(for: wake, untilShutdown: !state.stopped) }
        }
    }

    /// Waits for `signal`, the poll interval, or (when `untilShutdown`) shutdown, whichever comes first.
    private func wait(for signal: WebhookSignal, untilShutdown: Bool = true) async {
        let interval = options.pollInterval
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await signal.wait() }
            group.addTask { try? await Task.sleep(for: interval) }
            if untilShutdown { group.addTask { try? await gracefulShutdown() } }
            await group.next()
            group.cancelAll()
        }
    }

    /// One attempt of one delivery, for the sender (``WebhookSender/begin(_:)``): signed by the sender's thread
    /// that adds it, when it does, with `signer` (the delivery's secret keyed once, ``Signers``; without it the
    /// secret is keyed then); `finished` gets its outcome, to be recorded, on that thread once it ended.
    func request(
        _ delivery: ClaimedWebhookDelivery, taken: Date? = nil, signer: WebhookSignature.Signer? = nil,
        finished: @escaping @Sendable (WebhookAttempt) -> Void
    ) -> WebhookSender.Request {
        WebhookSender.Request(
            url: delivery.url, body: delivery.body,
            headers: { now in
                let timestamp = Int64(now.timeIntervalSince1970)
                let signature = (signer ?? WebhookSignature.Signer(secret: delivery.secret)).value(timestamp: timestamp, body: delivery.body.utf8)
                return [
                    "FieldSheet-Event-Id: \(delivery.eventID)",
                    "FieldSheet-Event-Type: \(delivery.kind.rawValue)",
                    "FieldSheet-Delivery: \(delivery.id)",
                    "FieldSheet-Delivery-Attempt: \(delivery.attempts + 1)",
                    "\(WebhookSignature.header): \(signature)",
                ]
            },
            finished: { response in finished(outcome(of: delivery, taken: taken, response: response)) })
    }

    /// One attempt of one delivery, blocking the calling thread (never the sender's) until it ended; its outcome.
    func attempt(_ delivery: ClaimedWebhookDelivery, signer: WebhookSignature.Signer? = nil, sender: WebhookSender) -> WebhookAttempt {
        let result = Mutex<WebhookAttempt?>(nil)
        let done = DispatchSemaphore(value: 0)
        sender.start(turn: {})
        sender.begin([
            request(delivery, signer: signer) { outcome in
                result.withLock { $0 = outcome }
                done.signal()
            }
        ])
        done.wait()
        return result.withLock { $0 }!
    }

    /// What an attempt came to: its timing trace line, its log line when it failed, and the outcome to record
    /// (with the retry's time when it failed).
    private func outcome(of delivery: ClaimedWebhookDelivery, taken: Date?, response: WebhookSender.Response) -> WebhookAttempt {
        let finished = Date()
        // Where an event's time goes between its commit and its receiver (webhook_bench.py reads this): the
        // times of the delivery's way, in seconds since 1970; never its body or secret. committed: its push's
        // commit was durable; handed: the push handed it to this service; taken: a turn took it into the
        // endpoint's queue; started: a sender thread signed it, having been handed it by the turn that gave it a
        // slot; added: that thread added its transfer to the multi handle; curlStart / sent: libcurl began the
        // transfer / was about to send the request (its pretransfer time; libcurl's own timings, counted back
        // from its end); finished: its answer was read.
        logger.trace("Webhook delivery timed", metadata: [
            "event": .string(delivery.eventID), "delivery": .stringConvertible(delivery.id),
            "committed": .string(Self.stamp(delivery.committedAt)), "handed": .string(Self.stamp(delivery.handedAt)),
            "taken": .string(Self.stamp(taken)), "started": .string(Self.stamp(response.prepared)), "added": .string(Self.stamp(response.added)),
            "curlStart": .string(Self.stamp(response.curlStarted)), "sent": .string(Self.stamp(response.sent)),
            "finished": .string(Self.stamp(finished)), "attemptMillis": .stringConvertible(response.millis),
        ])
        let attempt = WebhookAttempt(
            delivered: response.delivered, status: response.status, error: response.error, responseMillis: response.millis, at: finished,
            retryAt: response.delivered ? nil : options.retryAfter(attempts: delivery.attempts + 1, from: finished))
        if let error = response.error {
            logger.info("Webhook delivery failed; it will be retried", metadata: [
                "endpoint": .stringConvertible(delivery.endpointID), "delivery": .stringConvertible(delivery.id),
                "event": .string(delivery.eventID), "attempt": .stringConvertible(delivery.attempts + 1), "error": .string(error),
            ])
        }
        return attempt
    }

    /// A time of the timing trace: seconds since 1970 to the microsecond, or `-` for none. Integer arithmetic,
    /// not `String(format:)`: four stamps an attempt, and the formatter was most of the trace line's cost.
    static func stamp(_ date: Date?) -> String {
        guard let date else { return "-" }
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        guard micros >= 0 else { return String(format: "%.6f", date.timeIntervalSince1970) }
        let (seconds, fraction) = micros.quotientAndRemainder(dividingBy: 1_000_000)
        let digits = String(fraction)
        return "\(seconds).\(String(repeating: "0", count: 6 - digits.count))\(digits)"
    }
}

/// The signature's HMAC keyed once per endpoint and secret (``WebhookSignature/Signer``), so an attempt does not
/// key it again; used by the sender's thread alone. A secret changed by an admin is keyed anew; at most
/// ``limit`` endpoints are kept (then it starts over).
final class Signers: @unchecked Sendable {
    static let limit = 4096
    private var keyed: [Int64: (secret: String, signer: WebhookSignature.Signer)] = [:]

    func signer(endpoint: Int64, secret: String) -> WebhookSignature.Signer {
        if let kept = keyed[endpoint], kept.secret == secret { return kept.signer }
        if keyed.count >= Self.limit { keyed = [:] }
        let signer = WebhookSignature.Signer(secret: secret)
        keyed[endpoint] = (secret, signer)
        return signer
    }
}

/// What the two loops of ``WebhookDeliveryService`` share: the deliveries this process holds, by endpoint,
/// the deliveries under way, and what is to be recorded.
final class DeliveryState: Sendable {
    struct Turn {
        var outcomes: [(id: Int64, attempt: WebhookAttempt)]
        var releases: [Int64]
        var claim: Bool
        var busy: Set<Int64>
    }

    private struct State {
        /// Claimed deliveries not yet sent, by endpoint, oldest first, each with when it was queued (the timing
        /// trace's `taken`).
        var queued: [Int64: [(delivery: ClaimedWebhookDelivery, taken: Date)]] = [:]
        /// Deliveries under way, by endpoint.
        var active: [Int64: Int] = [:]
        var outcomes: [(id: Int64, attempt: WebhookAttempt)] = []
        var releases: [Int64] = []
        var claimWanted = true  // the outbox may hold work from before this process started
        var stopped = false
    }

    private let state = Mutex(State())

    func enqueue(_ deliveries: [ClaimedWebhookDelivery]) {
        guard !deliveries.isEmpty else { return }
        let taken = Date()
        state.withLock { state in
            for delivery in deliveries {
                if state.stopped {
                    state.releases.append(delivery.id)
                } else {
                    state.queued[delivery.endpointID, default: []].append((delivery, taken))
                }
            }
        }
    }

    func wantClaim() {
        state.withLock { $0.claimWanted = true }
    }

    /// The deliveries to start now: for each endpoint, its queued ones while it has fewer than
    /// ``WebhookOptions/deliveriesInFlightPerEndpoint`` under way, each with when it was queued. A delivery whose
    /// claim would end before an attempt could is given back instead.
    func startDeliveries(options: WebhookOptions, now: Date) -> [(delivery: ClaimedWebhookDelivery, taken: Date)] {
        let margin = WebhookOptions.seconds(options.timeout) + 5
        let slots = options.deliveriesInFlightPerEndpoint
        return state.withLock { state in
            var started: [(delivery: ClaimedWebhookDelivery, taken: Date)] = []
            for (endpoint, queue) in state.queued {
                let free = slots - state.active[endpoint, default: 0]
                guard free > 0 else { continue }
                let taken = queue.prefix(free)
                state.queued[endpoint] = taken.count == queue.count ? nil : Array(queue.dropFirst(taken.count))
                for entry in taken {
                    let delivery = entry.delivery
                    if delivery.claimedUntil.timeIntervalSince(now) >= margin {
                        started.append(entry)
                        state.active[endpoint, default: 0] += 1
                    } else {
                        state.releases.append(delivery.id)
                    }
                }
            }
            return started
        }
    }

    /// The endpoints with ``WebhookOptions/queuedPerEndpoint`` deliveries waiting for a slot: pushes and claims
    /// leave their deliveries in the outbox for now. Below that, an endpoint with every slot taken still takes
    /// hand-overs (they wait in its queue, and leave the moment a slot frees).
    func busy(options: WebhookOptions) -> Set<Int64> {
        state.withLock { Self.busy($0, options: options) }
    }

    private static func busy(_ state: State, options: WebhookOptions) -> Set<Int64> {
        Set(state.queued.filter { $0.value.count >= options.queuedPerEndpoint }.keys)
    }

    var releasesWaiting: Bool { state.withLock { !$0.releases.isEmpty } }

    var stopped: Bool { state.withLock { $0.stopped } }

    func finished(_ endpoint: Int64, outcome: (id: Int64, attempt: WebhookAttempt)) {
        state.withLock { state in
            state.outcomes.append(outcome)
            let left = state.active[endpoint, default: 1] - 1
            state.active[endpoint] = left > 0 ? left : nil
            // A delivered event may have been the one its record's next event waited for.
            if outcome.attempt.delivered { state.claimWanted = true }
        }
    }

    /// What the next bookkeeping transaction writes and whether it claims (never once stopped). Busy endpoints
    /// are left out of the claim.
    func takeTurn(poll: Bool, options: WebhookOptions) -> Turn {
        state.withLock { state in
            defer {
                state.outcomes = []
                state.releases = []
                state.claimWanted = false
            }
            return Turn(
                outcomes: state.outcomes, releases: state.releases, claim: !state.stopped && (poll || state.claimWanted),
                busy: Self.busy(state, options: options))
        }
    }

    /// No more deliveries start: what is queued goes back.
    func stop() {
        state.withLock { state in
            state.stopped = true
            for queue in state.queued.values { state.releases.append(contentsOf: queue.map(\.delivery.id)) }
            state.queued = [:]
        }
    }

    /// Stopped, with nothing under way or left to record.
    var done: Bool {
        state.withLock { $0.stopped && $0.active.isEmpty && $0.outcomes.isEmpty && $0.releases.isEmpty }
    }
}

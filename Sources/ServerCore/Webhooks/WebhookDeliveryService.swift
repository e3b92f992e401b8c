import Foundation
import Logging
import ServerStorage
import ServiceLifecycle
import Synchronization

/// Delivers the webhook outbox (``WebhookStorage``): claims due deliveries, posts each signed
/// (``WebhookSignature``) through ``WebhookSender``, and records the outcome, retrying failures with
/// exponential backoff and jitter (``WebhookOptions/retryAfter(attempts:from:)``). At least once: a delivery
/// is marked delivered only after a 2xx, so a crash between the two sends it again with the same event id.
///
/// Each endpoint's claimed deliveries are sent by a task of its own, all at once. An endpoint may have up to
/// ``WebhookOptions/batchesInFlightPerEndpoint`` such batches under way; the next claim leaves out endpoints
/// at that cap, so a slow or dead receiver holds up only itself. The storage hands out a record's next event
/// only once the one before it was delivered, so batches may overlap and each receiver still gets a record's
/// events in order. The service wakes when a push of this process wrote events (``WebhookSignal``) and otherwise looks
/// every ``WebhookOptions/pollInterval`` (retries that came due, events other instances wrote).
package struct WebhookDeliveryService: Service {
    let storage: any ServerStorage
    let options: WebhookOptions
    let logger: Logger

    package init(storage: any ServerStorage, options: WebhookOptions, logger: Logger) {
        self.storage = storage
        self.options = options
        self.logger = logger
    }

    /// Runs until the server shuts down; deliveries under way finish (each bounded by the timeout).
    package func run() async throws {
        guard options.deliver else { return }
        let inFlight = BatchesInFlight()
        let signal = storage.webhookSignal
        let sender = WebhookSender(options: options)
        // A claimed batch is sent at once: the lease covers one attempt, with room to record the outcomes.
        let lease = options.timeout + .seconds(30)
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                var claimed: [ClaimedWebhookDelivery] = []
                do {
                    let excluding = inFlight.full(cap: options.batchesInFlightPerEndpoint)
                    claimed = try await storage.claimWebhookDeliveries(now: Date(), lease: lease, limit: options.batchSize, excluding: excluding)
                } catch {
                    logger.warning("Webhook deliveries could not be claimed; trying again", metadata: ["error": .string("\(error)")])
                }
                let byEndpoint = Dictionary(grouping: claimed, by: \.endpointId)
                for (endpoint, deliveries) in byEndpoint {
                    inFlight.started(endpoint)
                    group.addTask {
                        guard !Task.isShuttingDownGracefully else {
                            // Not attempted: back at once, for this or another instance.
                            try? await storage.releaseWebhookClaims(ids: deliveries.map(\.id))
                            inFlight.finished(endpoint)
                            return
                        }
                        // A claim holds at most one delivery per record (the next waits for it to be delivered),
                        // so the batch may go out at once without breaking any record's order.
                        let outcomes = await withTaskGroup(of: (id: Int64, attempt: WebhookAttempt).self) { sends in
                            for delivery in deliveries {
                                sends.addTask { (delivery.id, await attempt(delivery, sender: sender)) }
                            }
                            return await sends.reduce(into: []) { $0.append($1) }
                        }
                        // The batch's outcomes in one transaction (one commit, not one per delivery).
                        do {
                            try await storage.finishWebhookDeliveries(outcomes)
                        } catch {
                            // The claims' lease runs out and the deliveries are sent again: at least once.
                            logger.warning("Webhook delivery outcomes could not be stored", metadata: [
                                "deliveries": .string(outcomes.map { String($0.id) }.joined(separator: ",")), "error": .string("\(error)"),
                            ])
                        }
                        inFlight.finished(endpoint)
                        signal.signal()  // this endpoint may have more waiting
                    }
                }
                if claimed.count < options.batchSize {
                    await waitForWork(signal)
                }
            }
        }
    }

    /// Waits for a signal, the poll interval, or shutdown, whichever comes first.
    private func waitForWork(_ signal: WebhookSignal) async {
        let interval = options.pollInterval
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await signal.wait() }
            group.addTask { try? await Task.sleep(for: interval) }
            group.addTask { try? await gracefulShutdown() }
            await group.next()
            group.cancelAll()
        }
    }

    /// One attempt of one delivery; its outcome, to be recorded.
    func attempt(_ delivery: ClaimedWebhookDelivery, sender: WebhookSender) async -> WebhookAttempt {
        let now = Date()
        let timestamp = Int64(now.timeIntervalSince1970)
        let headers = [
            ("FieldSheet-Event-Id", delivery.eventId),
            ("FieldSheet-Event-Type", delivery.kind.rawValue),
            ("FieldSheet-Delivery", String(delivery.id)),
            ("FieldSheet-Delivery-Attempt", String(delivery.attempts + 1)),
            (WebhookSignature.header, WebhookSignature.value(secret: delivery.secret, timestamp: timestamp, body: delivery.body.utf8)),
        ]
        let response = await sender.send(url: delivery.url, body: delivery.body, headers: headers)
        let finished = Date()
        let attempt = WebhookAttempt(
            delivered: response.delivered, status: response.status, error: response.error, responseMillis: response.millis, at: finished,
            retryAt: response.delivered ? nil : options.retryAfter(attempts: delivery.attempts + 1, from: finished))
        if let error = response.error {
            logger.info("Webhook delivery failed; it will be retried", metadata: [
                "endpoint": .stringConvertible(delivery.endpointId), "delivery": .stringConvertible(delivery.id),
                "event": .string(delivery.eventId), "attempt": .stringConvertible(delivery.attempts + 1), "error": .string(error),
            ])
        }
        return attempt
    }
}

/// How many claimed batches of each endpoint this process is sending now.
private final class BatchesInFlight: Sendable {
    private let counts = Mutex([Int64: Int]())

    func started(_ endpoint: Int64) {
        counts.withLock { $0[endpoint, default: 0] += 1 }
    }

    func finished(_ endpoint: Int64) {
        counts.withLock { counts in
            let left = counts[endpoint, default: 1] - 1
            counts[endpoint] = left > 0 ? left : nil
        }
    }

    /// The endpoints with `cap` batches under way: the next claim leaves them out.
    func full(cap: Int) -> Set<Int64> {
        counts.withLock { Set($0.filter { $0.value >= cap }.keys) }
    }
}

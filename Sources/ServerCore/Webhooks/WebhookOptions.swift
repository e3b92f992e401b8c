import Foundation
import ServerStorage

/// How the server delivers webhooks (`serve --webhook-…`): where it may send them, how long it waits, how
/// much of an answer it reads and how it backs off after a failure.
public struct WebhookOptions: Sendable, Hashable {
    /// Whether endpoints may resolve to loopback, link-local, private and other non-public addresses
    /// (`serve --webhooks-allow-private-addresses`). Off: such a delivery fails without connecting.
    public var allowPrivateAddresses: Bool
    /// The most one attempt may take, connecting included.
    public var timeout: Duration
    /// The most bytes of a receiver's answer read; a longer answer is cut off (its status still counts).
    public var maxResponseBytes: Int
    /// The wait after a first failed attempt; it doubles with each further failure, up to ``maxRetryDelay``,
    /// and each wait is drawn at random from its upper half (jitter).
    public var retryDelay: Duration
    public var maxRetryDelay: Duration
    /// How often the service looks for due deliveries when nothing woke it (events another instance wrote,
    /// retries that came due).
    public var pollInterval: Duration
    /// The most deliveries the service claims in one turn when no backlog is waiting, and the unit of
    /// ``batchesInFlightPerEndpoint``.
    public var batchSize: Int
    /// How many batches' worth of deliveries one endpoint may have under way at once
    /// (``deliveriesInFlightPerEndpoint``). The storage never hands out a record's next event before the one
    /// before it was delivered, so an endpoint's deliveries may overlap without breaking any record's order; the
    /// cap bounds what one slow receiver holds (transfers, connections, leases).
    public var batchesInFlightPerEndpoint: Int
    /// The most deliveries of one endpoint under way at once (each a transfer on one of the sender's threads, on a
    /// kept connection): ``batchesInFlightPerEndpoint`` batches of ``batchSize``.
    public var deliveriesInFlightPerEndpoint: Int { batchSize * batchesInFlightPerEndpoint }
    /// The most claimed deliveries of one endpoint held in memory waiting for a free slot. Pushes hand their
    /// deliveries over even to an endpoint with every slot taken, up to this many; an endpoint with this many
    /// waiting is busy: pushes leave its new deliveries in the outbox and claims leave it out until it catches
    /// up, so a slow or dead receiver holds at most this many bodies and leases
    /// (`serve --webhook-queued-per-endpoint`).
    public var queuedPerEndpoint: Int
    /// Whether this server delivers at all (off: it still writes the outbox, and another instance delivers).
    public var deliver: Bool

    public init(
        allowPrivateAddresses: Bool = false, timeout: Duration = .seconds(10), maxResponseBytes: Int = 64 * 1024,
        retryDelay: Duration = .seconds(2), maxRetryDelay: Duration = .seconds(3600), pollInterval: Duration = .seconds(1),
        batchSize: Int = 32, batchesInFlightPerEndpoint: Int = 4, queuedPerEndpoint: Int = 1024, deliver: Bool = true
    ) {
        self.allowPrivateAddresses = allowPrivateAddresses
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
        self.retryDelay = retryDelay
        self.maxRetryDelay = maxRetryDelay
        self.pollInterval = pollInterval
        self.batchSize = batchSize
        self.batchesInFlightPerEndpoint = max(1, batchesInFlightPerEndpoint)
        self.queuedPerEndpoint = max(1, queuedPerEndpoint)
        self.deliver = deliver
    }

    /// When to try again after the `attempts`-th failed attempt (1 for the first): `retryDelay · 2^(attempts-1)`,
    /// capped at `maxRetryDelay`, drawn from the upper half of that.
    public func retryAfter(attempts: Int, from now: Date) -> Date {
        let base = Self.seconds(retryDelay)
        let cap = Self.seconds(maxRetryDelay)
        let delay = min(cap, base * pow(2, Double(min(max(attempts - 1, 0), 40))))
        return now.addingTimeInterval(delay * Double.random(in: 0.5...1.0))
    }

    /// `duration` in seconds.
    public static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Checks an endpoint's URL as an admin gives it: http or https, with a host, no user name or password,
    /// at most 2,048 bytes. The address it resolves to is checked at each delivery.
    public static func validate(url text: String) throws -> String {
        guard text.utf8.count <= 2048 else {
            throw ServerConfigurationError("The webhook URL is \(text.utf8.count) bytes long; at most 2048 are allowed.")
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme) else {
            throw ServerConfigurationError("The webhook URL \"\(text)\" is not an http or https URL; expected one like https://example.org/fieldsheet-events.")
        }
        guard let host = components.host, !host.isEmpty else {
            throw ServerConfigurationError("The webhook URL \"\(text)\" names no host; expected one like https://example.org/fieldsheet-events.")
        }
        guard components.user == nil, components.password == nil else {
            throw ServerConfigurationError("The webhook URL must not hold a user name or password; the receiver checks the signature instead.")
        }
        return text
    }
}

import Foundation
import FormModel
import SyncCore

/// Webhooks as the server keeps them (docs/integrations.md, "Webhooks"): endpoints per project and an outbox
/// of deliveries, one row per event and endpoint, written in the transaction of the change it reports.
///
/// A push (``ServerStorage/push(projectID:clientID:mutationIDs:recordIDs:entityIDs:plan:)``) reads the
/// project's enabled endpoints inside its transaction; when one wants an event the push makes, the event is
/// built from the committed plan (``WebhookEvents``) and written beside the records, so a rolled-back push
/// leaves no event and a committed one cannot lose its event. A project without endpoints pays one indexed
/// read of an empty table.
///
/// When this process runs a delivery service (``WebhookSignal/attach(lease:wake:)``), the push also claims, in its
/// transaction, each delivery it writes that is the only undelivered one of its endpoint and subject, and hands
/// those to the service once the commit is durable: a new event leaves without waiting for another write
/// transaction. Everything else (retries, an event waiting behind an earlier one of its record, events other
/// instances wrote) is claimed by the service
/// (``claimWebhookDeliveries(finishing:releasing:now:lease:limit:excluding:)``), in the transaction that
/// records the outcomes of the attempts before. A delivery is claimed only when every earlier delivery of the
/// same endpoint and subject (the record or entity the event is about) has been delivered, so a receiver gets
/// each record's events in order.
public protocol WebhookStorage: Sendable {
    /// Registers an endpoint; its secret is stored as given and only ever read back to sign deliveries.
    func addWebhookEndpoint(projectID: Int64, url: String, events: Set<WebhookEventKind>, secret: String) async throws -> WebhookEndpoint
    /// The project's endpoints by id, without their secrets.
    func webhookEndpoints(projectID: Int64) async throws -> [WebhookEndpoint]
    /// Removes the endpoint with its delivery log; false when the project has no such endpoint.
    func removeWebhookEndpoint(projectID: Int64, id: Int64) async throws -> Bool
    /// Turns the endpoint's deliveries on or off (a disabled endpoint gets no new events and nothing is
    /// sent to it); false when the project has no such endpoint.
    func setWebhookEndpointEnabled(projectID: Int64, id: Int64, enabled: Bool) async throws -> Bool
    /// One turn of the delivery service's bookkeeping, in one write transaction: records the outcomes of
    /// attempts (`finishing`: delivered, or failed with when to try again), gives back claims that were not
    /// attempted (`releasing`: a server shutting down, or a delivery whose lease ran short before its turn), and
    /// takes up to `limit` deliveries that are due at `now`, each the oldest undelivered one of its endpoint and
    /// subject, leaving out the endpoints in `excluding` (busy in this process), holding them for `lease`: until
    /// then no other claim (of this or another instance) takes them. With nothing to finish or release and
    /// nothing due, it takes no write transaction at all.
    func claimWebhookDeliveries(
        finishing: [(id: Int64, attempt: WebhookAttempt)], releasing: [Int64], now: Date, lease: Duration, limit: Int, excluding: Set<Int64>
    ) async throws -> [ClaimedWebhookDelivery]
    /// The delivery log of the project (one endpoint's, when given), newest first, before the delivery id
    /// `before` when given.
    func webhookDeliveries(projectID: Int64, endpointID: Int64?, before: Int64?, limit: Int) async throws -> [WebhookDeliveryLogEntry]
    /// Sends the delivery again as soon as possible (delivered or not); false when the project has no such delivery.
    func redeliverWebhook(projectID: Int64, deliveryID: Int64) async throws -> Bool
    /// Sends the endpoint's deliveries of events created in `from...through` again, in their order; returns how many.
    func replayWebhooks(projectID: Int64, endpointID: Int64, from: Date, through: Date) async throws -> Int
    /// Wakes this process's delivery service when a push committed events, and hands it the deliveries the
    /// push claimed for it (``WebhookSignal``).
    var webhookSignal: WebhookSignal { get }
}

/// What a webhook endpoint may ask for.
public enum WebhookEventKind: String, Sendable, Hashable, CaseIterable, Comparable {
    case recordSubmitted = "record.submitted"
    case recordEdited = "record.edited"
    case recordDeleted = "record.deleted"
    case recordReviewed = "record.reviewed"
    case conflictOpened = "conflict.opened"
    case conflictResolved = "conflict.resolved"
    case entityCreated = "entity.created"
    case entityUpdated = "entity.updated"

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The kinds named in `text` (comma- or space-separated; `all` or `*` for every kind), or an error naming
    /// the unknown one and the known ones.
    public static func parse(_ text: String) throws -> Set<WebhookEventKind> {
        var kinds = Set<WebhookEventKind>()
        for name in text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init) where !name.isEmpty {
            if name == "all" || name == "*" {
                kinds.formUnion(allCases)
            } else if let kind = WebhookEventKind(rawValue: name) {
                kinds.insert(kind)
            } else {
                throw ServerConfigurationError(
                    "Unknown webhook event \"\(name)\"; expected one or more of \(allCases.map(\.rawValue).joined(separator: ", ")) (or all), separated by commas.")
            }
        }
        guard !kinds.isEmpty else {
            throw ServerConfigurationError("No webhook event named; expected one or more of \(allCases.map(\.rawValue).joined(separator: ", ")) (or all).")
        }
        return kinds
    }

    /// The stored form: names sorted, separated by spaces.
    public static func stored(_ kinds: Set<WebhookEventKind>) -> String {
        kinds.sorted().map(\.rawValue).joined(separator: " ")
    }

    /// Reads the stored form, skipping names this server does not know.
    public static func read(stored: String) -> Set<WebhookEventKind> {
        Set(stored.split(separator: " ").compactMap { WebhookEventKind(rawValue: String($0)) })
    }
}

/// A registered endpoint, as admins see it: never its secret.
public struct WebhookEndpoint: Sendable, Hashable {
    public var id: Int64
    public var projectID: Int64
    public var url: String
    public var events: Set<WebhookEventKind>
    public var enabled: Bool
    public var createdAt: Date

    public init(id: Int64, projectID: Int64, url: String, events: Set<WebhookEventKind>, enabled: Bool, createdAt: Date) {
        self.id = id
        self.projectID = projectID
        self.url = url
        self.events = events
        self.enabled = enabled
        self.createdAt = createdAt
    }
}

/// One event for the outbox, built in the push's transaction.
package struct WebhookEvent: Sendable, Hashable {
    /// The stable id receivers deduplicate on (a UUID, lowercase).
    package var id: String
    package var kind: WebhookEventKind
    /// The record or entity the event is about: deliveries of one subject go out in order.
    package var subject: String
    /// The JSON body sent, byte for byte, on every attempt.
    package var body: String

    package init(id: String, kind: WebhookEventKind, subject: String, body: String) {
        self.id = id
        self.kind = kind
        self.subject = subject
        self.body = body
    }
}

/// A delivery the service holds and is about to send.
public struct ClaimedWebhookDelivery: Sendable, Hashable {
    public var id: Int64
    public var endpointID: Int64
    public var url: String
    /// Used only to sign the body.
    public var secret: String
    public var eventID: String
    public var kind: WebhookEventKind
    public var body: String
    /// Attempts made before this one.
    public var attempts: Int
    /// Until when the claim holds it: no other claim takes it before then.
    public var claimedUntil: Date
    /// When the transaction that wrote it was durable, and when it was handed to the delivery service
    /// (``WebhookSignal/committed(_:durable:)``): set only on what a push of this process claimed and handed
    /// over, nil on what the service claimed itself. For the service's timing trace (`serve --log-level trace`).
    public var committedAt: Date?
    public var handedAt: Date?

    public init(
        id: Int64, endpointID: Int64, url: String, secret: String, eventID: String, kind: WebhookEventKind, body: String, attempts: Int,
        claimedUntil: Date
    ) {
        self.id = id
        self.claimedUntil = claimedUntil
        self.endpointID = endpointID
        self.url = url
        self.secret = secret
        self.eventID = eventID
        self.kind = kind
        self.body = body
        self.attempts = attempts
    }
}

/// The outcome of one delivery attempt.
public struct WebhookAttempt: Sendable, Hashable {
    /// The receiver answered 2xx.
    public var delivered: Bool
    /// The HTTP status, when the receiver answered.
    public var status: Int?
    /// Why the attempt failed (refused, timed out, the status and the start of the answer); nil when delivered.
    public var error: String?
    public var responseMillis: Int
    public var at: Date
    /// When to try again (failed attempts).
    public var retryAt: Date?

    public init(delivered: Bool, status: Int?, error: String?, responseMillis: Int, at: Date, retryAt: Date?) {
        self.delivered = delivered
        self.status = status
        self.error = error
        self.responseMillis = responseMillis
        self.at = at
        self.retryAt = retryAt
    }
}

/// One line of the delivery log.
public struct WebhookDeliveryLogEntry: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable {
        /// Not sent yet, or failed and waiting for its next attempt.
        case pending
        case delivered
    }

    public var id: Int64
    public var endpointID: Int64
    public var eventID: String
    public var kind: WebhookEventKind
    public var subject: String
    public var status: Status
    public var attempts: Int
    public var lastStatus: Int?
    public var lastError: String?
    public var responseMillis: Int?
    public var createdAt: Date
    public var nextAttemptAt: Date?
    public var deliveredAt: Date?

    public init(
        id: Int64, endpointID: Int64, eventID: String, kind: WebhookEventKind, subject: String, status: Status, attempts: Int, lastStatus: Int?,
        lastError: String?, responseMillis: Int?, createdAt: Date, nextAttemptAt: Date?, deliveredAt: Date?
    ) {
        self.id = id
        self.endpointID = endpointID
        self.eventID = eventID
        self.kind = kind
        self.subject = subject
        self.status = status
        self.attempts = attempts
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.responseMillis = responseMillis
        self.createdAt = createdAt
        self.nextAttemptAt = nextAttemptAt
        self.deliveredAt = deliveredAt
    }
}

/// An enabled endpoint as a push reads it in its transaction: which events it wants, and where and with which
/// secret a delivery the push claims is sent.
package struct WebhookSubscription: Sendable, Hashable {
    package var endpointID: Int64
    package var events: Set<WebhookEventKind>
    package var url: String
    package var secret: String

    package init(endpointID: Int64, events: Set<WebhookEventKind>, url: String = "", secret: String = "") {
        self.endpointID = endpointID
        self.events = events
        self.url = url
        self.secret = secret
    }
}

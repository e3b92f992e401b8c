import Foundation
import FormModel
import Logging
import PostgresNIO
import ServerStorage
import SyncCore

extension PostgresStorage {
    /// Writes the webhook events `plan` makes into the outbox, in the push's transaction: one row per event
    /// and endpoint that wants it. Returns how many rows it wrote (0, after one indexed read, for a project
    /// without enabled endpoints) and, when `claim` is given (a delivery service runs in this instance), the
    /// deliveries it claimed for that service until `claim.until`: each that is the only undelivered one of its
    /// endpoint and subject, for an endpoint not in `claim.busy`. The push holds its records' locks
    /// (``lockPush(_:projectID:clientID:recordIDs:entityIDs:)``), so no other push adds to their subjects meanwhile.
    static func writeWebhookEvents(
        _ connection: PostgresConnection, projectID: Int64, plan: PushPlan, encoded: PushPlan.Encoded, conflictIDs: [Int64], now: Double,
        claim: (until: Date, busy: Set<Int64>)? = nil
    ) async throws -> (written: Int, claimed: [ClaimedWebhookDelivery]) {
        var subscriptions: [WebhookSubscription] = []
        var projectName = ""
        for try await (id, events, name, url, secret) in try await connection.query("""
            SELECT e.id, e.events, p.name, e.url, e.secret FROM webhook_endpoints e JOIN projects p ON p.id = e.project_id
            WHERE e.project_id = \(projectID) AND e.enabled
            """, logger: .quiet).decode((Int64, String, String, String, String).self) {
            subscriptions.append(WebhookSubscription(endpointID: id, events: WebhookEventKind.read(stored: events), url: url, secret: secret))
            projectName = name
        }
        guard !subscriptions.isEmpty else { return (0, []) }
        let events = WebhookEvents.make(
            plan: plan, encoded: encoded, conflictIDs: conflictIDs, subscriptions: subscriptions, projectName: projectName,
            labels: try await webhookLabels(connection, projectID: projectID, plan: plan), at: Date(timeIntervalSince1970: now))
        var endpointIDs: [Int64] = []
        var eventIDs: [String] = []
        var kinds: [String] = []
        var subjects: [String] = []
        var payloads: [String] = []
        // Whether the row may be claimed for this instance: the first of its endpoint and subject in this push
        // (the statement below sees only rows written before it), for an endpoint that is not busy.
        var candidates: [Bool] = []
        var firsts = Set<String>()
        var written: [(event: WebhookEvent, endpoint: Int64)] = []
        for (event, endpoints) in events {
            for endpoint in endpoints {
                endpointIDs.append(endpoint)
                eventIDs.append(event.id)
                kinds.append(event.kind.rawValue)
                subjects.append(event.subject)
                payloads.append(event.body)
                let first = firsts.insert("\(endpoint) \(event.subject)").inserted
                candidates.append(claim.map { first && !$0.busy.contains(endpoint) } ?? false)
                written.append((event, endpoint))
            }
        }
        guard !endpointIDs.isEmpty else { return (0, []) }
        let until = claim?.until.timeIntervalSince1970 ?? 0
        // WITH ORDINALITY: identities follow the events' order, which is the order they are delivered in. A
        // candidate is claimed when nothing of its endpoint and subject waits before it: the order per record holds.
        let rows = try await connection.query("""
            INSERT INTO webhook_deliveries (endpoint_id, project_id, event_id, kind, subject, payload, created_at, next_attempt_at, claimed_until)
            SELECT d.endpoint_id, \(projectID), d.event_id::uuid, d.kind, d.subject, d.payload, \(now), \(now),
                CASE WHEN d.candidate AND NOT EXISTS (
                    SELECT 1 FROM webhook_deliveries b WHERE b.endpoint_id = d.endpoint_id AND b.subject = d.subject AND b.status = 'pending'
                ) THEN \(until)::float8 END
            FROM unnest(
                \(endpointIDs)::int8[], \(eventIDs)::text[], \(kinds)::text[], \(subjects)::text[], \(payloads)::text[], \(candidates)::bool[]
            ) WITH ORDINALITY AS d (endpoint_id, event_id, kind, subject, payload, candidate, n) ORDER BY d.n
            RETURNING id, endpoint_id, event_id::text, claimed_until IS NOT NULL
            """, logger: .quiet).collect()
        guard let claim else { return (endpointIDs.count, []) }
        var claimedIds: [String: Int64] = [:]
        for row in rows {
            let (id, endpoint, eventID, claimed) = try row.decode((Int64, Int64, String, Bool).self)
            if claimed { claimedIds["\(endpoint) \(eventID)"] = id }
        }
        let byID = Dictionary(subscriptions.map { ($0.endpointID, $0) }, uniquingKeysWith: { first, _ in first })
        let claimed = written.compactMap { event, endpoint -> ClaimedWebhookDelivery? in
            guard let id = claimedIds["\(endpoint) \(event.id)"], let subscription = byID[endpoint] else { return nil }
            return ClaimedWebhookDelivery(
                id: id, endpointID: endpoint, url: subscription.url, secret: subscription.secret, eventID: event.id, kind: event.kind,
                body: event.body, attempts: 0, claimedUntil: claim.until)
        }
        return (endpointIDs.count, claimed)
    }

    /// The labels of the form versions `plan`'s records were saved with: one indexed read of each version's
    /// digest, and of its definition only the first time this process meets that digest.
    static func webhookLabels(_ connection: PostgresConnection, projectID: Int64, plan: PushPlan) async throws -> [FormKey: WebhookLabels] {
        var labels: [FormKey: WebhookLabels] = [:]
        for key in WebhookEvents.formVersions(of: plan) {
            let version = Int64(key.version)
            var digest: String?
            for try await stored in try await connection.query("""
                SELECT digest FROM forms WHERE project_id = \(projectID) AND form_id = \(key.id) AND version = \(version)
                """, logger: .quiet).decode(String.self) {
                digest = stored
            }
            guard let digest else { continue }
            if let cached = WebhookLabels.cached(digest: digest) {
                labels[key] = cached
                continue
            }
            for try await definition in try await connection.query("""
                SELECT definition FROM forms WHERE project_id = \(projectID) AND form_id = \(key.id) AND version = \(version)
                """, logger: .quiet).decode(String.self) {
                labels[key] = WebhookLabels.decode(digest: digest, definition: definition)
            }
        }
        return labels
    }

    public func addWebhookEndpoint(projectID: Int64, url: String, events: Set<WebhookEventKind>, secret: String) async throws -> WebhookEndpoint {
        let now = Date()
        let stored = WebhookEventKind.stored(events)
        return try await transaction { connection in
            let rows = try await connection.query("""
                INSERT INTO webhook_endpoints (project_id, url, events, secret, enabled, created_at)
                VALUES (\(projectID), \(url), \(stored), \(secret), true, \(now.timeIntervalSince1970)) RETURNING id
                """, logger: .quiet).collect()
            guard let id = try rows.first?.decode(Int64.self) else { throw StorageError(.unknownProject, "There is no project with id \(projectID).") }
            return WebhookEndpoint(id: id, projectID: projectID, url: url, events: events, enabled: true, createdAt: now)
        }
    }

    public func webhookEndpoints(projectID: Int64) async throws -> [WebhookEndpoint] {
        let client = client
        return try await perform {
            var endpoints: [WebhookEndpoint] = []
            for try await (id, url, events, enabled, created) in try await client.query("""
                SELECT id, url, events, enabled, created_at FROM webhook_endpoints WHERE project_id = \(projectID) ORDER BY id
                """).decode((Int64, String, String, Bool, Double).self) {
                endpoints.append(WebhookEndpoint(
                    id: id, projectID: projectID, url: url, events: WebhookEventKind.read(stored: events), enabled: enabled,
                    createdAt: Date(timeIntervalSince1970: created)))
            }
            return endpoints
        }
    }

    public func removeWebhookEndpoint(projectID: Int64, id: Int64) async throws -> Bool {
        try await transaction { connection in
            try await connection.query("DELETE FROM webhook_deliveries WHERE project_id = \(projectID) AND endpoint_id = \(id)", logger: .quiet)
            let rows = try await connection.query(
                "DELETE FROM webhook_endpoints WHERE project_id = \(projectID) AND id = \(id) RETURNING id", logger: .quiet).collect()
            return !rows.isEmpty
        }
    }

    public func setWebhookEndpointEnabled(projectID: Int64, id: Int64, enabled: Bool) async throws -> Bool {
        try await transaction { connection in
            let rows = try await connection.query(
                "UPDATE webhook_endpoints SET enabled = \(enabled) WHERE project_id = \(projectID) AND id = \(id) RETURNING id", logger: .quiet).collect()
            return !rows.isEmpty
        }
    }

    /// Several instances claim at once: `FOR UPDATE … SKIP LOCKED` gives each row to one claimer, and the
    /// lease (`claimed_until`) keeps it from the others until it is finished or the lease runs out. The
    /// outcomes, the releases and the claim are one transaction.
    public func claimWebhookDeliveries(
        finishing outcomes: [(id: Int64, attempt: WebhookAttempt)], releasing: [Int64], now: Date, lease: Duration, limit: Int, excluding: Set<Int64>
    ) async throws -> [ClaimedWebhookDelivery] {
        guard !outcomes.isEmpty || !releasing.isEmpty || limit > 0 else { return [] }
        let at = now.timeIntervalSince1970
        let until = at + Double(lease.components.seconds) + Double(lease.components.attoseconds) / 1e18
        let busy = Array(excluding)
        let limit = Int64(limit)
        let ids = outcomes.map(\.id)
        let statuses = outcomes.map { $0.attempt.delivered ? "delivered" : "pending" }
        let httpStatuses = outcomes.map { Int64($0.attempt.status ?? -1) }
        let errors = outcomes.map { $0.attempt.error ?? "" }
        let millis = outcomes.map { Int64($0.attempt.responseMillis) }
        let deliveredAt = outcomes.map { $0.attempt.delivered ? $0.attempt.at.timeIntervalSince1970 : -1 }
        let next = outcomes.map { ($0.attempt.retryAt ?? $0.attempt.at).timeIntervalSince1970 }
        return try await transaction { connection in
            if !ids.isEmpty {
                try await connection.query("""
                    UPDATE webhook_deliveries w SET
                        status = o.status, attempts = w.attempts + 1, claimed_until = NULL, last_status = NULLIF(o.http, -1)::int4,
                        last_error = NULLIF(o.error, ''), response_ms = o.millis::int4, delivered_at = NULLIF(o.delivered_at, -1), next_attempt_at = o.next
                    FROM unnest(
                        \(ids)::int8[], \(statuses)::text[], \(httpStatuses)::int8[], \(errors)::text[], \(millis)::int8[],
                        \(deliveredAt)::float8[], \(next)::float8[]
                    ) AS o (id, status, http, error, millis, delivered_at, next)
                    WHERE w.id = o.id
                    """, logger: .quiet)
            }
            if !releasing.isEmpty {
                try await connection.query("UPDATE webhook_deliveries SET claimed_until = NULL WHERE id = ANY(\(releasing)::int8[])", logger: .quiet)
            }
            guard limit > 0 else { return [] }
            var claimed: [ClaimedWebhookDelivery] = []
            for try await (id, endpointID, url, secret, eventID, kind, body, attempts) in try await connection.query("""
                WITH due AS (
                    SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
                    WHERE d.status = 'pending' AND d.next_attempt_at <= \(at) AND (d.claimed_until IS NULL OR d.claimed_until < \(at)) AND e.enabled
                      AND NOT (d.endpoint_id = ANY(\(busy)::int8[]))
                      AND NOT EXISTS (
                          SELECT 1 FROM webhook_deliveries b
                          WHERE b.endpoint_id = d.endpoint_id AND b.subject = d.subject AND b.id < d.id AND b.status = 'pending')
                    ORDER BY d.next_attempt_at, d.id LIMIT \(limit)
                    FOR UPDATE OF d SKIP LOCKED
                )
                UPDATE webhook_deliveries w SET claimed_until = \(until)
                FROM due, webhook_endpoints e WHERE w.id = due.id AND e.id = w.endpoint_id
                RETURNING w.id, w.endpoint_id, e.url, e.secret, w.event_id::text, w.kind, w.payload, w.attempts
                """, logger: .quiet).decode((Int64, Int64, String, String, String, String, String, Int).self) {
                guard let kind = WebhookEventKind(rawValue: kind) else { continue }
                claimed.append(ClaimedWebhookDelivery(
                    id: id, endpointID: endpointID, url: url, secret: secret, eventID: eventID, kind: kind, body: body, attempts: attempts,
                    claimedUntil: Date(timeIntervalSince1970: until)))
            }
            return claimed.sorted { $0.id < $1.id }
        }
    }

    public func webhookDeliveries(projectID: Int64, endpointID: Int64?, before: Int64?, limit: Int) async throws -> [WebhookDeliveryLogEntry] {
        let client = client
        let before = before ?? Int64.max
        let limit = Int64(limit)
        return try await perform {
            var entries: [WebhookDeliveryLogEntry] = []
            for try await row in try await client.query("""
                SELECT id, endpoint_id, event_id::text, kind, subject, status, attempts, last_status, last_error, response_ms, created_at,
                    next_attempt_at, delivered_at
                FROM webhook_deliveries
                WHERE project_id = \(projectID) AND (\(endpointID)::int8 IS NULL OR endpoint_id = \(endpointID)) AND id < \(before)
                ORDER BY id DESC LIMIT \(limit)
                """) {
                let (id, endpoint, eventID, kind, subject, status, attempts, lastStatus, lastError, millis, created, next, delivered) = try row.decode(
                    (Int64, Int64, String, String, String, String, Int, Int?, String?, Int?, Double, Double, Double?).self)
                guard let kind = WebhookEventKind(rawValue: kind), let status = WebhookDeliveryLogEntry.Status(rawValue: status) else { continue }
                entries.append(WebhookDeliveryLogEntry(
                    id: id, endpointID: endpoint, eventID: eventID, kind: kind, subject: subject, status: status, attempts: attempts,
                    lastStatus: lastStatus, lastError: lastError, responseMillis: millis, createdAt: Date(timeIntervalSince1970: created),
                    nextAttemptAt: status == .pending ? Date(timeIntervalSince1970: next) : nil, deliveredAt: delivered.map(Date.init(timeIntervalSince1970:))))
            }
            return entries
        }
    }

    public func redeliverWebhook(projectID: Int64, deliveryID: Int64) async throws -> Bool {
        let now = Date().timeIntervalSince1970
        let changed = try await transaction { connection in
            let rows = try await connection.query("""
                UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = \(now), claimed_until = NULL
                WHERE project_id = \(projectID) AND id = \(deliveryID) RETURNING id
                """, logger: .quiet).collect()
            return !rows.isEmpty
        }
        if changed { webhookSignal.signal() }
        return changed
    }

    public func replayWebhooks(projectID: Int64, endpointID: Int64, from: Date, through: Date) async throws -> Int {
        let now = Date().timeIntervalSince1970
        let (low, high) = (from.timeIntervalSince1970, through.timeIntervalSince1970)
        let count = try await transaction { connection in
            try await connection.query("""
                UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = \(now), claimed_until = NULL
                WHERE project_id = \(projectID) AND endpoint_id = \(endpointID) AND created_at >= \(low) AND created_at <= \(high) RETURNING id
                """, logger: .quiet).collect().count
        }
        if count > 0 { webhookSignal.signal() }
        return count
    }
}

import Foundation
import FormModel
import GRDB
import ServerStorage
import SyncCore

extension SQLiteStorage {
    /// Writes the webhook events `plan` makes into the outbox, in the push's transaction: one row per event
    /// and endpoint that wants it. Returns how many rows it wrote (0, after one indexed read, for a project
    /// without enabled endpoints) and, when `claim` is given (a delivery service runs in this process), the
    /// deliveries it claimed for that service until `claim.until`: each that is the only undelivered one of its
    /// endpoint and subject (one indexed read each), for an endpoint not in `claim.busy`.
    static func writeWebhookEvents(
        _ db: Database, projectID: Int64, plan: PushPlan, encoded: PushPlan.Encoded, conflictIDs: [Int64], now: Double,
        claim: (until: Date, busy: Set<Int64>)? = nil
    ) throws -> (written: Int, claimed: [ClaimedWebhookDelivery]) {
        let rows = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT e.id, e.events, p.name, e.url, e.secret FROM webhook_endpoints e JOIN projects p ON p.id = e.project_id
            WHERE e.project_id = ? AND e.enabled
            """), arguments: [projectID])
        guard let first = rows.first else { return (0, []) }
        let subscriptions = rows.map {
            WebhookSubscription(endpointID: $0[0], events: WebhookEventKind.read(stored: $0[1]), url: $0[3], secret: $0[4])
        }
        let events = WebhookEvents.make(
            plan: plan, encoded: encoded, conflictIDs: conflictIDs, subscriptions: subscriptions, projectName: first[2],
            labels: try webhookLabels(db, projectID: projectID, plan: plan), at: Date(timeIntervalSince1970: now))
        let insert = try db.cachedStatement(sql: """
            INSERT INTO webhook_deliveries (endpoint_id, project_id, event_id, kind, subject, payload, created_at, next_attempt_at, claimed_until)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let waiting = try db.cachedStatement(sql: """
            SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ? AND subject = ? AND status = 'pending' LIMIT 1
            """)
        let byID = Dictionary(subscriptions.map { ($0.endpointID, $0) }, uniquingKeysWith: { first, _ in first })
        var count = 0
        var claimed: [ClaimedWebhookDelivery] = []
        for (event, endpoints) in events {
            for endpoint in endpoints {
                // Claimed here only when nothing of its record waits before it: the order per record holds.
                var until: Date?
                if let claim, !claim.busy.contains(endpoint), try Int.fetchOne(waiting, arguments: [endpoint, event.subject]) == nil {
                    until = claim.until
                }
                try insert.execute(arguments: [
                    endpoint, projectID, event.id, event.kind.rawValue, event.subject, event.body, now, now, until?.timeIntervalSince1970,
                ])
                count += 1
                if let until, let subscription = byID[endpoint] {
                    claimed.append(ClaimedWebhookDelivery(
                        id: db.lastInsertedRowID, endpointID: endpoint, url: subscription.url, secret: subscription.secret, eventID: event.id,
                        kind: event.kind, body: event.body, attempts: 0, claimedUntil: until))
                }
            }
        }
        return (count, claimed)
    }

    /// The labels of the form versions `plan`'s records were saved with: one indexed read of each version's
    /// digest, and of its definition only the first time this process meets that digest.
    static func webhookLabels(_ db: Database, projectID: Int64, plan: PushPlan) throws -> [FormKey: WebhookLabels] {
        var labels: [FormKey: WebhookLabels] = [:]
        for key in WebhookEvents.formVersions(of: plan) {
            let arguments: StatementArguments = [projectID, key.id, key.version]
            guard let digest = try String.fetchOne(
                db.cachedStatement(sql: "SELECT digest FROM forms WHERE project_id = ? AND form_id = ? AND version = ?"), arguments: arguments)
            else { continue }
            if let cached = WebhookLabels.cached(digest: digest) {
                labels[key] = cached
            } else if let definition = try String.fetchOne(
                db.cachedStatement(sql: "SELECT definition FROM forms WHERE project_id = ? AND form_id = ? AND version = ?"), arguments: arguments) {
                labels[key] = WebhookLabels.decode(digest: digest, definition: definition)
            }
        }
        return labels
    }

    public func addWebhookEndpoint(projectID: Int64, url: String, events: Set<WebhookEventKind>, secret: String) async throws -> WebhookEndpoint {
        try await write { db in
            let now = Date()
            try db.execute(
                sql: "INSERT INTO webhook_endpoints (project_id, url, events, secret, enabled, created_at) VALUES (?, ?, ?, ?, 1, ?)",
                arguments: [projectID, url, WebhookEventKind.stored(events), secret, now.timeIntervalSince1970])
            return WebhookEndpoint(id: db.lastInsertedRowID, projectID: projectID, url: url, events: events, enabled: true, createdAt: now)
        }
    }

    public func webhookEndpoints(projectID: Int64) async throws -> [WebhookEndpoint] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, url, events, enabled, created_at FROM webhook_endpoints WHERE project_id = ? ORDER BY id", arguments: [projectID]).map {
                WebhookEndpoint(
                    id: $0[0], projectID: projectID, url: $0[1], events: WebhookEventKind.read(stored: $0[2]), enabled: $0[3],
                    createdAt: Date(timeIntervalSince1970: $0[4]))
            }
        }
    }

    public func removeWebhookEndpoint(projectID: Int64, id: Int64) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM webhook_deliveries WHERE project_id = ? AND endpoint_id = ?", arguments: [projectID, id])
            try db.execute(sql: "DELETE FROM webhook_endpoints WHERE project_id = ? AND id = ?", arguments: [projectID, id])
            return db.changesCount > 0
        }
    }

    public func setWebhookEndpointEnabled(projectID: Int64, id: Int64, enabled: Bool) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "UPDATE webhook_endpoints SET enabled = ? WHERE project_id = ? AND id = ?", arguments: [enabled, projectID, id])
            return db.changesCount > 0
        }
    }

    public func claimWebhookDeliveries(
        finishing outcomes: [(id: Int64, attempt: WebhookAttempt)], releasing: [Int64], now: Date, lease: Duration, limit: Int, excluding: Set<Int64>
    ) async throws -> [ClaimedWebhookDelivery] {
        let at = now.timeIntervalSince1970
        let until = at + Double(lease.components.seconds) + Double(lease.components.attoseconds) / 1e18
        let busy = "[" + excluding.map { String($0) }.joined(separator: ",") + "]"
        let claimSQL = """
            SELECT d.id, d.endpoint_id, e.url, e.secret, d.event_id, d.kind, d.payload, d.attempts
            FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
            WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.claimed_until IS NULL OR d.claimed_until < ?) AND e.enabled
              AND d.endpoint_id NOT IN (SELECT value FROM json_each(?))
              AND NOT EXISTS (
                  SELECT 1 FROM webhook_deliveries b
                  WHERE b.endpoint_id = d.endpoint_id AND b.subject = d.subject AND b.id < d.id AND b.status = 'pending')
            ORDER BY d.next_attempt_at, d.id LIMIT ?
            """
        if outcomes.isEmpty && releasing.isEmpty {
            guard limit > 0 else { return [] }
            // A look without the writer first: the service asks often, and mostly nothing is due.
            let due = try await pool.read { db in
                try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM (\(claimSQL))"), arguments: [at, at, busy, limit])
            }
            guard let due, due > 0 else { return [] }
        }
        return try await write { db in
            if !outcomes.isEmpty {
                let update = try db.cachedStatement(sql: """
                    UPDATE webhook_deliveries SET
                        status = ?, attempts = attempts + 1, claimed_until = NULL, last_status = ?, last_error = ?, response_ms = ?,
                        delivered_at = ?, next_attempt_at = ?
                    WHERE id = ?
                    """)
                for (id, attempt) in outcomes {
                    try update.execute(arguments: [
                        attempt.delivered ? "delivered" : "pending", attempt.status, attempt.error, attempt.responseMillis,
                        attempt.delivered ? attempt.at.timeIntervalSince1970 : nil,
                        (attempt.retryAt ?? attempt.at).timeIntervalSince1970, id,
                    ])
                }
            }
            if !releasing.isEmpty {
                try db.execute(
                    sql: "UPDATE webhook_deliveries SET claimed_until = NULL WHERE id IN (SELECT value FROM json_each(?))",
                    arguments: ["[" + releasing.map { String($0) }.joined(separator: ",") + "]"])
            }
            guard limit > 0 else { return [] }
            let rows = try Row.fetchAll(db.cachedStatement(sql: claimSQL), arguments: [at, at, busy, limit])
            let claim = try db.cachedStatement(sql: "UPDATE webhook_deliveries SET claimed_until = ? WHERE id = ?")
            return try rows.compactMap { row in
                let id: Int64 = row[0]
                try claim.execute(arguments: [until, id])
                guard let kind = WebhookEventKind(rawValue: row[5]) else { return nil }
                return ClaimedWebhookDelivery(
                    id: id, endpointID: row[1], url: row[2], secret: row[3], eventID: row[4], kind: kind, body: row[6], attempts: row[7],
                    claimedUntil: Date(timeIntervalSince1970: until))
            }
        }
    }

    public func webhookDeliveries(projectID: Int64, endpointID: Int64?, before: Int64?, limit: Int) async throws -> [WebhookDeliveryLogEntry] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT id, endpoint_id, event_id, kind, subject, status, attempts, last_status, last_error, response_ms, created_at,
                    next_attempt_at, delivered_at
                FROM webhook_deliveries
                WHERE project_id = ? AND (? IS NULL OR endpoint_id = ?) AND id < ?
                ORDER BY id DESC LIMIT ?
                """, arguments: [projectID, endpointID, endpointID, before ?? Int64.max, limit]).compactMap(Self.deliveryLogEntry)
        }
    }

    static func deliveryLogEntry(_ row: Row) -> WebhookDeliveryLogEntry? {
        guard let kind = WebhookEventKind(rawValue: row[3]), let status = WebhookDeliveryLogEntry.Status(rawValue: row[5]) else { return nil }
        return WebhookDeliveryLogEntry(
            id: row[0], endpointID: row[1], eventID: row[2], kind: kind, subject: row[4], status: status, attempts: row[6],
            lastStatus: row[7], lastError: row[8], responseMillis: row[9], createdAt: Date(timeIntervalSince1970: row[10]),
            nextAttemptAt: status == .pending ? date(row[11]) : nil, deliveredAt: date(row[12]))
    }

    public func redeliverWebhook(projectID: Int64, deliveryID: Int64) async throws -> Bool {
        let changed = try await write { db in
            try db.execute(
                sql: "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, claimed_until = NULL WHERE project_id = ? AND id = ?",
                arguments: [Date().timeIntervalSince1970, projectID, deliveryID])
            return db.changesCount > 0
        }
        if changed { webhookSignal.signal() }
        return changed
    }

    public func replayWebhooks(projectID: Int64, endpointID: Int64, from: Date, through: Date) async throws -> Int {
        let count = try await write { db in
            try db.execute(sql: """
                UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, claimed_until = NULL
                WHERE project_id = ? AND endpoint_id = ? AND created_at >= ? AND created_at <= ?
                """, arguments: [Date().timeIntervalSince1970, projectID, endpointID, from.timeIntervalSince1970, through.timeIntervalSince1970])
            return db.changesCount
        }
        if count > 0 { webhookSignal.signal() }
        return count
    }
}

import Foundation
import PostgresNIO
import ServerStorage

extension PostgresStorage {
    public func recordAudit(_ event: AuditEvent) async throws -> AuditEntry {
        let client = client
        let now = Date()
        let at = now.timeIntervalSince1970
        let detail = event.storedDetail
        let action = event.action.rawValue
        return try await perform {
            let rows = try await client.query("""
                INSERT INTO audit_log (at, actor_id, actor, address, project_id, action, subject, detail)
                VALUES (\(at), \(event.actorID), \(event.actor), \(event.address), \(event.projectID), \(action), \(event.subject), \(detail))
                RETURNING id
                """).collect()
            guard let id = try rows.first?.decode(Int64.self) else { throw StorageError(.unavailable, "The audit log did not return the new entry's id.") }
            return AuditEntry(id: id, at: now, event: event)
        }
    }

    public func auditLog(_ query: AuditQuery) async throws -> [AuditEntry] {
        let client = client
        let before = query.before ?? Int64.max
        let action = query.action?.rawValue
        let since = query.since?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude
        let until = query.until?.timeIntervalSince1970 ?? Double.greatestFiniteMagnitude
        let limit = max(0, query.limit)
        return try await perform {
            var entries: [AuditEntry] = []
            for try await (id, at, actorID, actor, address, projectID, action, subject, detail) in try await client.query("""
                SELECT id, at, actor_id, actor, address, project_id, action, subject, detail FROM audit_log
                WHERE id < \(before) AND (\(query.projectID)::int8 IS NULL OR project_id = \(query.projectID))
                    AND (\(query.actor)::text IS NULL OR actor = \(query.actor)) AND (\(action)::text IS NULL OR action = \(action))
                    AND at >= \(since) AND at <= \(until)
                ORDER BY id DESC LIMIT \(limit)
                """).decode((Int64, Double, Int64?, String, String?, Int64?, String, String, String).self) {
                entries.append(AuditEntry(
                    id: id, at: Date(timeIntervalSince1970: at),
                    event: AuditEvent(
                        actor: actor, actorID: actorID, address: address, projectID: projectID, action: AuditAction(rawValue: action),
                        subject: subject, detail: AuditEvent.detail(stored: detail))))
            }
            return entries
        }
    }
}

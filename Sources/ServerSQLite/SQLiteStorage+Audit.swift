import Foundation
import GRDB
import ServerStorage

extension SQLiteStorage {
    public func recordAudit(_ event: AuditEvent) async throws -> AuditEntry {
        let now = Date()
        let detail = event.storedDetail
        return try await write { db in
            try db.execute(
                sql: "INSERT INTO audit_log (at, actor_id, actor, address, project_id, action, subject, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [now.timeIntervalSince1970, event.actorID, event.actor, event.address, event.projectID, event.action.rawValue, event.subject, detail])
            return AuditEntry(id: db.lastInsertedRowID, at: now, event: event)
        }
    }

    public func auditLog(_ query: AuditQuery) async throws -> [AuditEntry] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT id, at, actor_id, actor, address, project_id, action, subject, detail FROM audit_log
                WHERE id < ? AND (? IS NULL OR project_id = ?) AND (? IS NULL OR actor = ?) AND (? IS NULL OR action = ?)
                    AND at >= ? AND at <= ?
                ORDER BY id DESC LIMIT ?
                """,
                arguments: [
                    query.before ?? Int64.max, query.projectID, query.projectID, query.actor, query.actor,
                    query.action?.rawValue, query.action?.rawValue, query.since?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude,
                    query.until?.timeIntervalSince1970 ?? Double.greatestFiniteMagnitude, max(0, query.limit),
                ]
            ).map { row in
                AuditEntry(
                    id: row[0], at: Date(timeIntervalSince1970: row[1]),
                    event: AuditEvent(
                        actor: row[3], actorID: row[2], address: row[4], projectID: row[5], action: AuditAction(rawValue: row[6]),
                        subject: row[7], detail: AuditEvent.detail(stored: row[8])))
            }
        }
    }
}

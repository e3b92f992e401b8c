import Foundation
import GRDB
import ServerStorage
import SyncCore

extension SQLiteStorage {
    public func reviewCounts(projectID: Int64, visibility: RecordVisibility) async throws -> [ReviewCount] {
        let viewer = visibility.viewer
        return try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT r.form_id, r.review_state, count(*) FROM records r
                WHERE r.project_id = ? AND r.state <> 'deleted' AND (r.author_id = ? OR (? AND r.shared))
                GROUP BY r.form_id, r.review_state
                """, arguments: [projectID, viewer.userID, viewer.seesShared]).map { row in
                ReviewCount(formID: row[0], reviewState: (row[1] as String?).flatMap(ReviewState.init(rawValue:)), count: row[2])
            }
        }
    }

    public func recordTable(projectID: Int64, query: RecordTableQuery, visibility: RecordVisibility) async throws -> [RecordTableRow] {
        let (sql, arguments) = Self.recordTableSQL(projectID: projectID, query: query, visibility: visibility)
        return try await pool.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                let record = try Self.storedRecord(row)
                return RecordTableRow(record: record, cursor: .init(time: row["sort_time"], id: record.id))
            }
        }
    }

    /// The statement of one table page. The cursor is `time >= ? AND (time > ? OR id > ?)` (mirrored for
    /// descending), not a row value: SQLite seeks an expression index (`records_by_form_created`) only on a plain
    /// range of its expression, and would otherwise walk the index from its start to reach a deep page.
    package static func recordTableSQL(projectID: Int64, query: RecordTableQuery, visibility: RecordVisibility) -> (String, StatementArguments) {
        let viewer = visibility.viewer
        let sort = query.sortExpression
        var sql = """
            SELECT \(Self.recordColumns), \(sort) AS sort_time FROM records r JOIN users u ON u.id = r.author_id
            WHERE r.project_id = ? AND r.form_id = ? AND r.state <> 'deleted' AND (r.author_id = ? OR (? AND r.shared))
            """
        var arguments: StatementArguments = [projectID, query.formID, viewer.userID, viewer.seesShared]
        if let state = query.reviewState {
            sql += " AND r.review_state = ?"
            _ = arguments.append(contentsOf: [state.rawValue])
        }
        if let author = query.author {
            sql += " AND r.author_id = (SELECT id FROM users WHERE name = ?)"
            _ = arguments.append(contentsOf: [author])
        }
        if let from = query.changedFrom {
            sql += " AND r.updated_at >= ?"
            _ = arguments.append(contentsOf: [from.timeIntervalSince1970])
        }
        if let before = query.changedBefore {
            sql += " AND r.updated_at < ?"
            _ = arguments.append(contentsOf: [before.timeIntervalSince1970])
        }
        let direction = query.descending ? "DESC" : "ASC"
        if let after = query.after {
            let (within, beyond) = query.descending ? ("<=", "<") : (">=", ">")
            sql += " AND \(sort) \(within) ? AND (\(sort) \(beyond) ? OR r.id \(beyond) ?)"
            _ = arguments.append(contentsOf: [after.time, after.time, after.id.lowercased])
        }
        sql += " ORDER BY \(sort) \(direction), r.id \(direction) LIMIT ?"
        _ = arguments.append(contentsOf: [query.limit])
        return (sql, arguments)
    }

    public func members(projectID: Int64) async throws -> [ProjectMember] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT u.name, m.role, (SELECT count(*) FROM tokens t WHERE t.user_id = u.id AND t.revoked_at IS NULL), u.id
                FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.project_id = ? ORDER BY u.name
                """, arguments: [projectID]).compactMap { row in
                Role(rawValue: row[1]).map { ProjectMember(name: row[0], role: $0, activeTokens: row[2], userID: row[3]) }
            }
        }
    }

    public func conflictLog(projectID: Int64, viewer: Int64, recordID: UUID) async throws -> [ConflictLogEntry] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                \(ConflictLogEntry.selectSQL)
                WHERE c.project_id = ? AND c.record_id = ? AND (r.author_id = ? OR r.shared) ORDER BY c.id
                """, arguments: [projectID, recordID.lowercased, viewer]).map { try Self.conflictLogEntry(db, projectID: projectID, $0) }
        }
    }

    public func openSession(tokenHash: Data, session: ConsoleSessionRecord) async throws -> Principal? {
        try await write { db in
            try db.execute(sql: "DELETE FROM console_sessions WHERE expires_at <= ?", arguments: [session.createdAt.timeIntervalSince1970])
            guard let row = try Row.fetchOne(db, sql: """
                SELECT t.id, t.token_hash, u.id, u.name FROM tokens t JOIN users u ON u.id = t.user_id
                WHERE t.token_hash = ? AND t.revoked_at IS NULL
                """, arguments: [tokenHash]) else { return nil }
            let stored: Data = row[1]
            guard ConstantTime.equals(stored, tokenHash) else { return nil }
            let tokenID: Int64 = row[0]
            try db.execute(sql: """
                INSERT INTO console_sessions (id_hash, token_id, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
                """, arguments: [session.idHash, tokenID, session.csrf, session.createdAt.timeIntervalSince1970, session.expiresAt.timeIntervalSince1970])
            return try Self.principal(db, userID: row[2], name: row[3], tokenID: tokenID)
        }
    }

    public func session(idHash: Data, now: Date) async throws -> (principal: Principal, csrf: String)? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT s.id_hash, s.csrf, u.id, u.name, t.id FROM console_sessions s
                JOIN tokens t ON t.id = s.token_id JOIN users u ON u.id = t.user_id
                WHERE s.id_hash = ? AND s.expires_at > ? AND t.revoked_at IS NULL
                """, arguments: [idHash, now.timeIntervalSince1970]) else { return nil }
            let stored: Data = row[0]
            guard ConstantTime.equals(stored, idHash) else { return nil }
            return (try Self.principal(db, userID: row[2], name: row[3], tokenID: row[4]), row[1])
        }
    }

    public func closeSession(idHash: Data) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM console_sessions WHERE id_hash = ?", arguments: [idHash]) }
    }
}

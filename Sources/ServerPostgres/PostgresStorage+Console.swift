import Foundation
import PostgresNIO
import ServerStorage
import SyncCore

extension PostgresStorage {
    public func reviewCounts(projectID: Int64, visibility: RecordVisibility) async throws -> [ReviewCount] {
        let client = client
        let viewer = visibility.viewer
        return try await perform {
            var result: [ReviewCount] = []
            for try await (formID, state, count) in try await client.query("""
                SELECT r.form_id, r.review_state, count(*) FROM records r
                WHERE r.project_id = \(projectID) AND r.state <> 'deleted' AND (r.author_id = \(viewer.userID) OR (\(viewer.seesShared) AND r.shared))
                GROUP BY r.form_id, r.review_state
                """).decode((String, String?, Int64).self) {
                result.append(ReviewCount(formID: formID, reviewState: state.flatMap(ReviewState.init(rawValue:)), count: Int(count)))
            }
            return result
        }
    }

    /// Optional filters are bound as NULL when absent: each query is planned with its parameters' values, so
    /// `NULL IS NULL` folds away and the order's index (`records_by_form_…`) serves the page.
    public func recordTable(projectID: Int64, query: RecordTableQuery, visibility: RecordVisibility) async throws -> [RecordTableRow] {
        let client = client
        let viewer = visibility.viewer
        let sort = query.sortExpression
        let direction = query.descending ? "DESC" : "ASC"
        let comparison = query.descending ? "<" : ">"
        return try await perform {
            let rows = try await client.query("""
                SELECT \(unescaped: Self.recordColumns), \(unescaped: sort) FROM records r JOIN users u ON u.id = r.author_id
                WHERE r.project_id = \(projectID) AND r.form_id = \(query.formID) AND r.state <> 'deleted'
                  AND (r.author_id = \(viewer.userID) OR (\(viewer.seesShared) AND r.shared))
                  AND (\(query.reviewState?.rawValue)::text IS NULL OR r.review_state = \(query.reviewState?.rawValue)::text)
                  AND (\(query.author)::text IS NULL OR r.author_id = (SELECT id FROM users WHERE name = \(query.author)::text))
                  AND (\(query.changedFrom?.timeIntervalSince1970)::float8 IS NULL OR r.updated_at >= \(query.changedFrom?.timeIntervalSince1970)::float8)
                  AND (\(query.changedBefore?.timeIntervalSince1970)::float8 IS NULL OR r.updated_at < \(query.changedBefore?.timeIntervalSince1970)::float8)
                  AND (\(query.after?.time)::float8 IS NULL OR (\(unescaped: sort), r.id) \(unescaped: comparison) (\(query.after?.time)::float8, \(query.after?.id)::uuid))
                ORDER BY \(unescaped: sort) \(unescaped: direction), r.id \(unescaped: direction) LIMIT \(Int64(query.limit))
                """)
            var result: [RecordTableRow] = []
            for try await (id, formID, formVersion, state, authorID, authorName, shared, revision, sequence, fields,
                           reviewState, reviewComment, created, submitted, updated, device, received, sortTime) in rows.decode(
                (UUID, String, Int, String, Int64, String, Bool, Int64, Int64, String, String?, String?, Double?, Double?, Double, String?, Double?, Double).self) {
                let record = try Self.storedRecord(
                    id: id, formID: formID, formVersion: formVersion, state: state, authorID: authorID, authorName: authorName, shared: shared,
                    revision: revision, sequence: sequence, fields: fields, reviewState: reviewState, reviewComment: reviewComment,
                    created: created, submitted: submitted, updated: updated, received: received, device: device)
                result.append(RecordTableRow(record: record, cursor: .init(time: sortTime, id: id)))
            }
            return result
        }
    }

    public func members(projectID: Int64) async throws -> [ProjectMember] {
        let client = client
        return try await perform {
            var result: [ProjectMember] = []
            for try await (name, role, tokens, userID) in try await client.query("""
                SELECT u.name, m.role, (SELECT count(*) FROM tokens t WHERE t.user_id = u.id AND t.revoked_at IS NULL), u.id
                FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.project_id = \(projectID) ORDER BY u.name
                """).decode((String, String, Int64, Int64).self) {
                if let role = Role(rawValue: role) { result.append(ProjectMember(name: name, role: role, activeTokens: Int(tokens), userID: userID)) }
            }
            return result
        }
    }

    public func conflictLog(projectID: Int64, viewer: Int64, recordID: UUID) async throws -> [ConflictLogEntry] {
        let client = client
        return try await perform {
            try await client.withConnection { connection in
                try await Self.conflictLogEntries(connection, projectID: projectID, try await connection.query("""
                    \(unescaped: ConflictLogEntry.selectSQL)
                    WHERE c.project_id = \(projectID) AND c.record_id = \(recordID) AND (r.author_id = \(viewer) OR r.shared) ORDER BY c.id
                    """, logger: .quiet))
            }
        }
    }

    public func openSession(tokenHash: Data, session: ConsoleSessionRecord) async throws -> Principal? {
        let created = session.createdAt.timeIntervalSince1970
        let expires = session.expiresAt.timeIntervalSince1970
        return try await transaction { connection in
            try await connection.query("DELETE FROM console_sessions WHERE expires_at <= \(created)", logger: .quiet)
            var found: (tokenID: Int64, stored: ByteBuffer, userID: Int64, name: String)?
            for try await row in try await connection.query("""
                SELECT t.id, t.token_hash, u.id, u.name FROM tokens t JOIN users u ON u.id = t.user_id
                WHERE t.token_hash = \(ByteBuffer(bytes: tokenHash)) AND t.revoked_at IS NULL
                """, logger: .quiet).decode((Int64, ByteBuffer, Int64, String).self) {
                found = row
            }
            guard let found, ConstantTime.equals(Data(found.stored.readableBytesView), tokenHash) else { return nil }
            try await connection.query("""
                INSERT INTO console_sessions (id_hash, token_id, csrf, created_at, expires_at)
                VALUES (\(ByteBuffer(bytes: session.idHash)), \(found.tokenID), \(session.csrf), \(created), \(expires))
                """, logger: .quiet)
            return try await Self.principal(connection, userID: found.userID, name: found.name, tokenID: found.tokenID)
        }
    }

    public func session(idHash: Data, now: Date) async throws -> (principal: Principal, csrf: String)? {
        let client = client
        let now = now.timeIntervalSince1970
        return try await perform {
            try await client.withConnection { connection in
                var found: (stored: ByteBuffer, csrf: String, userID: Int64, name: String, tokenID: Int64)?
                for try await row in try await connection.query("""
                    SELECT s.id_hash, s.csrf, u.id, u.name, t.id FROM console_sessions s
                    JOIN tokens t ON t.id = s.token_id JOIN users u ON u.id = t.user_id
                    WHERE s.id_hash = \(ByteBuffer(bytes: idHash)) AND s.expires_at > \(now) AND t.revoked_at IS NULL
                    """, logger: .quiet).decode((ByteBuffer, String, Int64, String, Int64).self) {
                    found = row
                }
                guard let found, ConstantTime.equals(Data(found.stored.readableBytesView), idHash) else { return nil }
                return (try await Self.principal(connection, userID: found.userID, name: found.name, tokenID: found.tokenID), found.csrf)
            }
        }
    }

    public func closeSession(idHash: Data) async throws {
        let client = client
        _ = try await perform {
            try await client.query("DELETE FROM console_sessions WHERE id_hash = \(ByteBuffer(bytes: idHash))")
        }
    }
}

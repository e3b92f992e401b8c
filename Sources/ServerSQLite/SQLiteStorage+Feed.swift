import Foundation
import GRDB
import ServerStorage
import SyncCore

extension SQLiteStorage {
    public func feedRecords(projectID: Int64, query: RecordFeedQuery, visibility: RecordVisibility) async throws -> [StoredRecord] {
        let (sql, arguments) = Self.feedSQL(projectID: projectID, query: query, visibility: visibility, count: false)
        // Prepared for this page, not cached: the text varies with the filter's shape (up to 16 conditions), and a
        // connection's statement cache keeps every text it was given for the life of the server.
        return try await pool.read { db in try Self.storedRecords(db.makeStatement(sql: sql), arguments: arguments) }
    }

    public func countFeedRecords(projectID: Int64, query: RecordFeedQuery, visibility: RecordVisibility) async throws -> Int {
        let (sql, arguments) = Self.feedSQL(projectID: projectID, query: query, visibility: visibility, count: true)
        return try await pool.read { db in try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0 }
    }

    /// The statement of a feed page (or of its count): the form's id index (`records_by_form`) serves the order
    /// and the cursor, or `records_by_form_review_author` when the page is filtered on both the review state and
    /// the author.
    package static func feedSQL(projectID: Int64, query: RecordFeedQuery, visibility: RecordVisibility, count: Bool) -> (String, StatementArguments) {
        let viewer = visibility.viewer
        var sql = """
            SELECT \(count ? "count(*)" : Self.recordColumns) FROM records r\(count ? "" : " JOIN users u ON u.id = r.author_id")
            WHERE r.project_id = ? AND r.form_id = ? AND r.state <> 'deleted' AND (r.author_id = ? OR (? AND r.shared))
            """
        var arguments: StatementArguments = [projectID, query.formID, viewer.userID, viewer.seesShared]
        let conditions = query.whereSQL { "?" }
        sql += conditions.sql
        for argument in conditions.arguments {
            switch argument {
            case .seconds(let seconds): _ = arguments.append(contentsOf: [seconds])
            case .text(let text): _ = arguments.append(contentsOf: [text])
            }
        }
        guard !count else { return (sql, arguments) }
        if let after = query.after {
            sql += " AND r.id > ?"
            _ = arguments.append(contentsOf: [after.lowercased])
        }
        sql += " ORDER BY r.id LIMIT ? OFFSET ?"
        _ = arguments.append(contentsOf: [query.limit, query.offset])
        return (sql, arguments)
    }
}

import Foundation
import PostgresNIO
import ServerStorage
import SyncCore

extension PostgresStorage {
    public func feedRecords(projectID: Int64, query: RecordFeedQuery, visibility: RecordVisibility) async throws -> [StoredRecord] {
        let client = client
        let statement = Self.feedQuery(projectID: projectID, query: query, visibility: visibility, count: false)
        return try await perform { try await Self.storedRecords(try await client.query(statement)) }
    }

    public func countFeedRecords(projectID: Int64, query: RecordFeedQuery, visibility: RecordVisibility) async throws -> Int {
        let client = client
        let statement = Self.feedQuery(projectID: projectID, query: query, visibility: visibility, count: true)
        return try await perform {
            var count: Int64 = 0
            for try await (value) in try await client.query(statement).decode(Int64.self) { count = value }
            return Int(count)
        }
    }

    /// The statement of a feed page (or of its count), its conditions written by ``RecordFeedQuery`` as on SQLite:
    /// the form's id index (`records_by_form`) serves the order and the cursor, or `records_by_form_review_author`
    /// when the page is filtered on both the review state and the author. The count reads `records` alone, as on
    /// SQLite, so it is an index-only scan of `records_by_form_review_author` where the visibility map allows
    /// (``RecordsVacuum`` keeps it current after large imports).
    static func feedQuery(projectID: Int64, query: RecordFeedQuery, visibility: RecordVisibility, count: Bool) -> PostgresQuery {
        let viewer = visibility.viewer
        var bindings = PostgresBindings(capacity: 8)
        func next() -> String { "$\(bindings.count + 1)" }
        // The count needs no author name: every record has its one author (`author_id` is `NOT NULL REFERENCES
        // users`), and PostgreSQL keeps an inner join it cannot remove, probing users once per counted record.
        var sql = "SELECT \(count ? "count(*)" : Self.recordColumns) FROM records r\(count ? "" : " JOIN users u ON u.id = r.author_id")"
        sql += " WHERE r.project_id = \(next())"
        bindings.append(projectID)
        sql += " AND r.form_id = \(next())"
        bindings.append(query.formID)
        sql += " AND r.state <> 'deleted' AND (r.author_id = \(next())"
        bindings.append(viewer.userID)
        sql += " OR (\(next()) AND r.shared))"
        bindings.append(viewer.seesShared)
        // Placeholders are numbered as the conditions' arguments are appended, in the same order.
        var numbered = bindings.count
        let conditions = query.whereSQL {
            numbered += 1
            return "$\(numbered)"
        }
        sql += conditions.sql
        for argument in conditions.arguments {
            switch argument {
            case .seconds(let seconds): bindings.append(seconds)
            case .text(let text): bindings.append(text)
            }
        }
        if !count {
            if let after = query.after {
                sql += " AND r.id > \(next())::uuid"
                bindings.append(after.lowercased)
            }
            sql += " ORDER BY r.id LIMIT \(next())"
            bindings.append(Int64(query.limit))
            sql += " OFFSET \(next())"
            bindings.append(Int64(query.offset))
        }
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }
}

import Foundation
import FormModel
import GRDB
import ServerStorage
import SyncCore

/// The console's entity table (docs/entity-lists.md, "The console"): a page of a list's entities in label order,
/// by keyset, with a label search, a property filter and an assignee. Every page is a range of an index in the
/// table's order: `entities_by_label`, `entities_by_assignee` for one assignee's entities, `entity_properties`
/// for the entities with a property's value; a search that few labels match reads those from the trigram index
/// of the labels (`entity_label_search`) instead.
extension SQLiteStorage {
    public func entityTable(projectID: Int64, list: String, query: EntityTableQuery) async throws -> [EntityTableRow] {
        try await pool.read { db in
            let candidates = try Self.labelSearchCandidates(db, projectID: projectID, list: list, query: query)
            let (sql, arguments) = Self.entityTableSQL(projectID: projectID, list: list, query: query, candidates: candidates)
            let rows = try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                EntityTableRow(
                    id: UUID(uuidString: row[0]) ?? UUID(), label: row[1], revision: row[2], creatorName: row[3], assigneeName: row[4],
                    deleted: row[5], updatedAt: Date(timeIntervalSince1970: row[6]), fields: row[7])
            }
            return query.readsBackwards ? rows.reversed() : rows
        }
    }

    /// How many entities of a list a search may find in the label index (`entity_label_search`) and still read
    /// them alone; a search that finds more walks `entities_by_label`, where it soon finds matches.
    static let entitySearchCandidates = 2_000

    /// The ids of the entities the page of a search may show, from the label index (the trigrams of every
    /// label), or nil when the table walks its label index instead: for a search that is not ASCII text of three
    /// characters or more (the index's LIKE ignores the case of ASCII letters only, as SQLite's does, and takes
    /// no escape character, so text holding one of `%_\` walks too), and for one that more than
    /// ``entitySearchCandidates`` labels of the list contain (counted first, in SQL). With no other filter the
    /// page is cut from the candidates' labels in `entity_labels`, so that only its entities are read; with one,
    /// every candidate from the keyset on is.
    static func labelSearchCandidates(_ db: Database, projectID: Int64, list: String, query: EntityTableQuery) throws -> [String]? {
        guard let search = query.search, search.utf8.count >= 3, search.unicodeScalars.allSatisfy(\.isASCII),
              !search.contains(where: { "%_\\".contains($0) })
        else { return nil }
        // CROSS JOIN: the index is read first; the other order would ask it once for every entity of the list.
        let candidates = "entity_label_search s CROSS JOIN entity_labels l ON l.key = s.rowid WHERE s.label LIKE ? AND l.project_id = ? AND l.list = ?"
        var arguments: StatementArguments = ["%" + search + "%", projectID, list]
        let found = try Int.fetchOne(
            db.cachedStatement(sql: "SELECT count(*) FROM (SELECT 1 FROM \(candidates) LIMIT \(entitySearchCandidates + 1))"), arguments: arguments) ?? 0
        guard found <= entitySearchCandidates else { return nil }
        var sql = "SELECT l.id FROM \(candidates)"
        switch query.position {
        case .first, .last: break
        case .after(let label, let id):
            sql += " AND (l.label, l.id) > (?, ?)"
            arguments += [label, id.lowercased]
        case .before(let label, let id):
            sql += " AND (l.label, l.id) < (?, ?)"
            arguments += [label, id.lowercased]
        }
        if query.filter == nil, query.assignee == nil {
            let direction = query.readsBackwards ? "DESC" : "ASC"
            sql += " ORDER BY l.label \(direction), l.id \(direction) LIMIT ?"
            arguments += [query.limit]
        }
        return try String.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    /// The entity table's statement: a range of the index that serves the page's filters, from the keyset, in
    /// the table's order or (for `before` and `last`) against it — `entity_properties` for a property filter
    /// (its rows of that property and value, in label order), else `entities_by_assignee` for one assignee's
    /// entities, else `entities_by_label`; or, for a search the label index answered (`candidates`,
    /// ``labelSearchCandidates(_:projectID:list:query:)``), those entities read by their key and sorted, with
    /// every condition of the walk.
    package static func entityTableSQL(projectID: Int64, list: String, query: EntityTableQuery, candidates: [String]? = nil) -> (String, StatementArguments) {
        var from: String
        var conditions: [String]
        var arguments: StatementArguments
        if let candidates {
            // `+e.list`: the entities are found by their key, not by walking a label index of the list.
            from = "entities e"
            conditions = ["e.project_id = ?", "e.id IN (SELECT value FROM json_each(?))", "+e.list = ?"]
            arguments = [projectID, JSONWriter.array(of: candidates), list]
            if let filter = query.filter {
                conditions.append("""
                    EXISTS (SELECT 1 FROM entity_properties p WHERE p.project_id = e.project_id AND p.list = e.list AND p.name = ? AND p.value = ? \
                    AND p.label = e.label AND p.id = e.id)
                    """)
                arguments += [propertyKey(filter.name), filter.value]
            }
        } else if let filter = query.filter {
            // CROSS JOIN: the property's rows are read first, in label order; each entity then by its key.
            from = "entity_properties p CROSS JOIN entities e ON e.project_id = p.project_id AND e.id = p.id"
            conditions = ["p.project_id = ?", "p.list = ?", "p.name = ?", "p.value = ?"]
            arguments = [projectID, list, propertyKey(filter.name), filter.value]
        } else {
            from = "entities e INDEXED BY \(query.assignee == nil ? "entities_by_label" : "entities_by_assignee")"
            conditions = ["e.project_id = ?", "e.list = ?"]
            arguments = [projectID, list]
        }
        // The rows whose (label, id) the keyset and the order read: the property's when it leads.
        let key = candidates == nil && query.filter != nil ? "p" : "e"
        switch query.position {
        case .first, .last: break
        case .after(let label, let id):
            conditions.append("(\(key).label, \(key).id) > (?, ?)")
            arguments += [label, id.lowercased]
        case .before(let label, let id):
            conditions.append("(\(key).label, \(key).id) < (?, ?)")
            arguments += [label, id.lowercased]
        }
        if let assignee = query.assignee {
            conditions.append("e.assignee_id = (SELECT id FROM users WHERE name = ?)")
            arguments += [assignee]
        }
        if let search = query.search, !search.isEmpty {
            conditions.append("\(key).label LIKE ? ESCAPE '\\'")
            arguments += ["%" + likeEscaped(search) + "%"]
        }
        arguments += [query.limit]
        let direction = query.readsBackwards ? "DESC" : "ASC"
        if candidates == nil, query.filter == nil, query.search?.isEmpty == false {
            // A search that walks the label index tests each entry's label in the index alone (it holds every
            // column the walk reads) and reads only the page's entities from the table: testing them as rows
            // would read every row it passes over. The page's rows are sorted again, no more than `limit`.
            let sql = """
                SELECT e.id, e.label, e.revision, c.name, a.name, e.deleted, e.updated_at, e.fields
                FROM (SELECT e.project_id, e.label, e.id FROM \(from) WHERE \(conditions.joined(separator: " AND "))
                      ORDER BY e.label \(direction), e.id \(direction) LIMIT ?) k
                CROSS JOIN entities e ON e.project_id = k.project_id AND e.id = k.id \(entityJoins)
                ORDER BY k.label \(direction), k.id \(direction)
                """
            return (sql, arguments)
        }
        let sql = """
            SELECT e.id, e.label, e.revision, c.name, a.name, e.deleted, e.updated_at, e.fields
            FROM \(from) \(entityJoins)
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(key).label \(direction), \(key).id \(direction) LIMIT ?
            """
        return (sql, arguments)
    }

    /// The key of a property in `entity_properties` for the name a filter gives, as ``propertyPath(_:)`` reads it.
    static func propertyKey(_ name: String) -> String {
        name.replacingOccurrences(of: "\"", with: "")
    }

    /// `text` for a LIKE pattern with `\` as its escape: `%`, `_` and `\` match themselves.
    static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }
}

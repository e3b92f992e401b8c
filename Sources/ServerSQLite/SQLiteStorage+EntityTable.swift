import Foundation
import FormModel
import GRDB
import ServerStorage
import SyncCore

/// The console's entity table (docs/entity-lists.md, "The console"): a page of a list's entities in label order,
/// by keyset, with a label search, a property filter and an assignee. Every page is a range of an index in the
/// table's order: `entities_by_label`, `entities_by_assignee` for one assignee's entities, `entity_properties`
/// for the entities with a property's value; a search that few labels match reads those from the trigram index
/// of the labels (`entity_label_search`) instead, and one that many match, but few of them past their first
/// character (`entity_label_rest_search`), seeks the labels that start with it in `entities_by_label`.
extension SQLiteStorage {
    public func entityTable(projectID: Int64, list: String, query: EntityTableQuery) async throws -> [EntityTableRow] {
        try await pool.read { db in try Self.entityTable(db, projectID: projectID, list: list, query: query) }
    }

    /// A page of the table read in `db`. `candidates` is how many labels a search may read from a trigram index
    /// instead of walking (``entitySearchCandidates``; tests lower it so that a small list takes every way).
    package static func entityTable(
        _ db: Database, projectID: Int64, list: String, query: EntityTableQuery, candidates cap: Int = EntityLabelSearch.candidates
    ) throws -> [EntityTableRow] {
        let candidates = try labelSearchCandidates(db, projectID: projectID, list: list, query: query, cap: cap)
        let (sql, arguments) = entityTableSQL(projectID: projectID, list: list, query: query, candidates: candidates)
        let rows = try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            EntityTableRow(
                id: UUID(text: row[0]) ?? UUID(), label: row[1], revision: row[2], creatorName: row[3], assigneeName: row[4],
                deleted: row[5], updatedAt: Date(timeIntervalSince1970: row[6]), fields: row[7])
        }
        return query.readsBackwards ? rows.reversed() : rows
    }

    /// The ids of the entities the page of a search may show, from the label index (the trigrams of every
    /// label), or nil when the table walks its label index instead: for a search that is not ASCII text of three
    /// characters or more without `%_\` (``EntityLabelSearch/usesTrigrams(_:)``), and for one that more than
    /// `cap` (``EntityLabelSearch/candidates``) labels of the list contain (counted first, in SQL), unless the labels
    /// that start with it and those that hold it further in answer it (with no other filter:
    /// ``labelStartOrRestCandidates(_:projectID:list:query:text:cap:)``). With no other filter the page is cut
    /// from the candidates' labels in `entity_labels`, so that only its entities are read; with one, every
    /// candidate from the keyset on is.
    static func labelSearchCandidates(_ db: Database, projectID: Int64, list: String, query: EntityTableQuery, cap: Int) throws -> [String]? {
        guard let search = query.search, EntityLabelSearch.usesTrigrams(search) else { return nil }
        // CROSS JOIN: the index is read first; the other order would ask it once for every entity of the list.
        let candidates = "entity_label_search s CROSS JOIN entity_labels l ON l.key = s.rowid WHERE s.label LIKE ? AND l.project_id = ? AND l.list = ?"
        var arguments: StatementArguments = ["%" + search + "%", projectID, list]
        let found = try Int.fetchOne(
            db.cachedStatement(sql: "SELECT count(*) FROM (SELECT 1 FROM \(candidates) LIMIT \(cap + 1))"), arguments: arguments) ?? 0
        guard found <= cap else {
            guard query.filter == nil, query.assignee == nil else { return nil }
            return try labelStartOrRestCandidates(db, projectID: projectID, list: list, query: query, text: search, cap: cap)
        }
        var sql = "SELECT l.id FROM \(candidates)"
        keyset(query.position, sql: &sql, arguments: &arguments)
        if query.filter == nil, query.assignee == nil {
            let direction = query.readsBackwards ? "DESC" : "ASC"
            sql += " ORDER BY l.label \(direction), l.id \(direction) LIMIT ?"
            arguments += [query.limit]
        }
        return try String.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    /// Appends the keyset condition of `position` (after or before a label and id of `entity_labels l`) to `sql`.
    static func keyset(_ position: EntityTableQuery.Position, sql: inout String, arguments: inout StatementArguments) {
        switch position {
        case .first, .last: break
        case .after(let label, let id):
            sql += " AND (l.label, l.id) > (?, ?)"
            arguments += [label, id.lowercased]
        case .before(let label, let id):
            sql += " AND (l.label, l.id) < (?, ?)"
            arguments += [label, id.lowercased]
        }
    }

    /// The ids of the page of a search that many labels match (more than `cap`), or nil when
    /// the table walks its label index instead: a label holds the text at its start or further in, so the page is
    /// the first `limit` (in the table's order, from the keyset) of the labels that start with it — sought in
    /// `entities_by_label` (``labelsStarting(with:_:projectID:list:query:)``) — and of those that hold it after
    /// their first character, which the trigram index of the labels without it (`entity_label_rest_search`)
    /// finds: at most `cap` of those (counted first) and they are read and sorted; more, and
    /// the search walks. A label in both is counted once (``EntityLabelSearch/merged(_:_:limit:backwards:)``).
    /// Text of printable ASCII only (``EntityLabelSearch/seeksPrefixes(_:)``).
    static func labelStartOrRestCandidates(_ db: Database, projectID: Int64, list: String, query: EntityTableQuery, text: String, cap: Int) throws -> [String]? {
        guard EntityLabelSearch.seeksPrefixes(text) else { return nil }
        let rest = "entity_label_rest_search r CROSS JOIN entity_labels l ON l.key = r.rowid WHERE r.rest LIKE ? AND l.project_id = ? AND l.list = ?"
        var arguments: StatementArguments = ["%" + text + "%", projectID, list]
        let found = try Int.fetchOne(
            db.cachedStatement(sql: "SELECT count(*) FROM (SELECT 1 FROM \(rest) LIMIT \(cap + 1))"), arguments: arguments) ?? 0
        guard found <= cap else { return nil }
        var sql = "SELECT l.label, l.id FROM \(rest)"
        keyset(query.position, sql: &sql, arguments: &arguments)
        let direction = query.readsBackwards ? "DESC" : "ASC"
        sql += " ORDER BY l.label \(direction), l.id \(direction) LIMIT ?"
        arguments += [query.limit]
        let inside = try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { (label: $0[0] as String, id: $0[1] as String) }
        guard let starting = try labelsStarting(with: Array(text.utf8), db, projectID: projectID, list: list, query: query) else { return nil }
        return EntityLabelSearch.merged(starting, inside, limit: query.limit, backwards: query.readsBackwards).map(\.id)
    }

    /// The first `limit` entries of `entities_by_label` from the keyset, in the table's order or against it,
    /// whose label starts with `text` (ASCII letters in either case, as LIKE compares them), or nil when that
    /// takes more than ``EntityLabelSearch/seeks`` seeks. The labels that start with one spelling of the text are a
    /// range of the index; each statement reads from where the next such range may begin
    /// (``EntityLabelSearch/prefixStep(_:_:backwards:)``) until a label that starts with none, so a page costs a seek for each
    /// spelling present, not a walk of the labels in between.
    static func labelsStarting(with text: [UInt8], _ db: Database, projectID: Int64, list: String, query: EntityTableQuery) throws -> [(label: String, id: String)]? {
        let backwards = query.readsBackwards
        let direction = backwards ? "DESC" : "ASC"
        var bound: (sql: String, arguments: StatementArguments)
        switch query.position {
        case .first, .last: bound = ("", [])
        case .after(let label, let id): bound = (" AND (label, id) > (?, ?)", [label, id.lowercased])
        case .before(let label, let id): bound = (" AND (label, id) < (?, ?)", [label, id.lowercased])
        }
        var found: [(label: String, id: String)] = []
        for _ in 0..<EntityLabelSearch.seeks {
            let wanted = query.limit - found.count
            guard wanted > 0 else { return found }
            let sql = "SELECT label, id FROM entities INDEXED BY entities_by_label WHERE project_id = ? AND list = ?\(bound.sql) ORDER BY label \(direction), id \(direction) LIMIT ?"
            let rows = try Row.fetchAll(db.cachedStatement(sql: sql), arguments: [projectID, list] + bound.arguments + [wanted])
            var next: [UInt8]?
            for row in rows {
                let label: String = row[0]
                switch EntityLabelSearch.prefixStep(Array(label.utf8), text, backwards: backwards) {
                case .match: found.append((label, row[1]))
                case .seek(let bytes): next = bytes
                case .exhausted: return found
                }
                if next != nil { break }
            }
            guard let next else { return found }
            bound = (backwards ? " AND label < ?" : " AND label >= ?", [String(decoding: next, as: UTF8.self)])
        }
        return nil
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
            arguments += ["%" + EntityLabelSearch.likeEscaped(search) + "%"]
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
}

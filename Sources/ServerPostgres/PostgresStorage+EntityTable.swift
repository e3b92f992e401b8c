import Foundation
import PostgresNIO
import ServerStorage

/// The console's entity table (docs/entity-lists.md, "The console"), as on SQLite: a page of a list's entities in
/// label order (`COLLATE "C"`, byte order), by keyset, with a label search (``EntityLabelSearch``: ASCII letters
/// in either case), a property filter and an assignee. A property filter reads the entities with that value from
/// `entity_properties` in label order; otherwise the page walks `entities_by_label` (`entities_by_assignee` for
/// one assignee's entities). A search with no other filter reads the labels that start with its text as ranges
/// of `entities_by_label` and those that hold it further in from the trigram index of the labels without their
/// first character (`entities_label_rest_trigrams`, migration 22), when at most
/// ``EntityLabelSearch/candidates`` do; with a filter, the planner may read the trigram index of the whole
/// labels (`entities_label_trigrams`).
extension PostgresStorage {
    public func entityTable(projectID: Int64, list: String, query: EntityTableQuery) async throws -> [EntityTableRow] {
        try await entityTable(projectID: projectID, list: list, query: query, candidates: EntityLabelSearch.candidates)
    }

    /// A page of the table; `cap` is how many labels a search may read from the trigram index of the labels'
    /// rest instead of walking (tests lower it so that a small list takes every way).
    package func entityTable(projectID: Int64, list: String, query: EntityTableQuery, candidates cap: Int) async throws -> [EntityTableRow] {
        let client = client
        return try await perform {
            try await client.withConnection { connection in
                let keys = try await Self.labelStartOrRestKeys(connection, projectID: projectID, list: list, query: query, cap: cap)
                let statement = Self.entityTableQuery(projectID: projectID, list: list, query: query, ids: keys)
                var result: [EntityTableRow] = []
                for try await (id, label, revision, creator, assignee, deleted, updated, fields) in try await connection.query(statement, logger: .quiet)
                    .decode((UUID, String, Int64, String, String?, Bool, Double, String).self) {
                    result.append(EntityTableRow(
                        id: id, label: label, revision: revision, creatorName: creator, assigneeName: assignee, deleted: deleted,
                        updatedAt: Date(timeIntervalSince1970: updated), fields: fields))
                }
                return query.readsBackwards ? result.reversed() : result
            }
        }
    }

    /// The ids of the page of a search with no other filter, or nil when the page walks the label index instead:
    /// the first `limit` (in the table's order, from the keyset) of the labels that start with the text, sought in
    /// `entities_by_label` (``labelsStarting(with:_:projectID:list:query:)``), and of those that hold it after
    /// their first character, which `entities_label_rest_trigrams` finds — counted up to `cap` + 1 in the
    /// statement that reads the page's; more than `cap`, and the search walks. For text the trigram index can
    /// take (``EntityLabelSearch/usesTrigrams(_:)``) of printable ASCII.
    static func labelStartOrRestKeys(_ connection: PostgresConnection, projectID: Int64, list: String, query: EntityTableQuery, cap: Int) async throws -> [UUID]? {
        guard query.filter == nil, query.assignee == nil, let text = query.search, EntityLabelSearch.usesTrigrams(text), EntityLabelSearch.seeksPrefixes(text)
        else { return nil }
        var bindings = PostgresBindings(capacity: 6)
        func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
            bindings.append(value)
            return "$\(bindings.count)"
        }
        // The candidates are read (at most cap + 1) before they are counted and sorted: a MATERIALIZED
        // statement of its own, planned with its limit, which the planner answers from the trigram index. The
        // count comes in every row, and in a row of its own when no candidate is on the page.
        var sql = """
            WITH c AS MATERIALIZED (SELECT label, id FROM entities WHERE project_id = \(bind(projectID)) AND list = \(bind(list)) \
            AND lower(substr(label, 2) COLLATE "C") LIKE \(bind("%" + EntityLabelSearch.folded(text) + "%")) LIMIT \(cap + 1)),
            page AS (SELECT label, id FROM c WHERE true
            """
        switch query.position {
        case .first, .last: break
        case .after(let label, let id): sql += " AND (label COLLATE \"C\", id) > (\(bind(label))::text COLLATE \"C\", \(bind(id))::uuid)"
        case .before(let label, let id): sql += " AND (label COLLATE \"C\", id) < (\(bind(label))::text COLLATE \"C\", \(bind(id))::uuid)"
        }
        let direction = query.readsBackwards ? "DESC" : "ASC"
        sql += " ORDER BY label COLLATE \"C\" \(direction), id \(direction) LIMIT \(bind(Int64(query.limit))))"
        sql += " SELECT n.found, page.label, page.id FROM (SELECT count(*) AS found FROM c) n LEFT JOIN page ON true"
        var found = 0
        var inside: [(label: String, id: String)] = []
        for try await (count, label, id) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: .quiet)
            .decode((Int64, String?, UUID?).self) {
            found = Int(count)
            if let label, let id { inside.append((label, id.lowercased)) }
        }
        guard found <= cap else { return nil }
        guard let starting = try await labelsStarting(with: Array(text.utf8), connection, projectID: projectID, list: list, query: query) else { return nil }
        return EntityLabelSearch.merged(starting, inside, limit: query.limit, backwards: query.readsBackwards).compactMap { UUID(text: $0.id) }
    }

    /// The first `limit` entries of `entities_by_label` from the keyset, in the table's order or against it,
    /// whose label starts with `text` (ASCII letters in either case), or nil when that takes more than
    /// ``EntityLabelSearch/seeks`` seeks: each statement reads from where the next range of a spelling of the text
    /// may begin (``EntityLabelSearch/prefixStep(_:_:backwards:)``) until a label that starts with none.
    static func labelsStarting(
        with text: [UInt8], _ connection: PostgresConnection, projectID: Int64, list: String, query: EntityTableQuery
    ) async throws -> [(label: String, id: String)]? {
        let backwards = query.readsBackwards
        let direction = backwards ? "DESC" : "ASC"
        enum Bound { case none, key(String, UUID), label(String) }
        var bound: Bound
        switch query.position {
        case .first, .last: bound = .none
        case .after(let label, let id), .before(let label, let id): bound = .key(label, id)
        }
        var found: [(label: String, id: String)] = []
        for _ in 0..<EntityLabelSearch.seeks {
            let wanted = query.limit - found.count
            guard wanted > 0 else { return found }
            var bindings = PostgresBindings(capacity: 5)
            func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
                bindings.append(value)
                return "$\(bindings.count)"
            }
            var sql = "SELECT label, id FROM entities WHERE project_id = \(bind(projectID)) AND list = \(bind(list))"
            switch bound {
            case .none: break
            case .key(let label, let id):
                sql += " AND (label COLLATE \"C\", id) \(backwards ? "<" : ">") (\(bind(label))::text COLLATE \"C\", \(bind(id))::uuid)"
            case .label(let label):
                sql += " AND label COLLATE \"C\" \(backwards ? "<" : ">=") \(bind(label))::text COLLATE \"C\""
            }
            sql += " ORDER BY label COLLATE \"C\" \(direction), id \(direction) LIMIT \(bind(Int64(wanted)))"
            var next: [UInt8]?
            var stop = false
            for try await (label, id) in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: .quiet)
                .decode((String, UUID).self) {
                guard next == nil, !stop else { continue }
                switch EntityLabelSearch.prefixStep(Array(label.utf8), text, backwards: backwards) {
                case .match: found.append((label, id.lowercased))
                case .seek(let bytes): next = bytes
                case .exhausted: stop = true
                }
            }
            guard !stop, let next else { return found }
            bound = .label(String(decoding: next, as: UTF8.self))
        }
        return nil
    }

    /// The statement of a page: its conditions on the rows that lead (`p`, the property's rows, for a filter;
    /// `e` otherwise), the keyset on their (label, id), in the table's order or (for `before` and `last`) against
    /// it; or, for a search whose page's entities are known (`ids`, ``labelStartOrRestKeys(_:projectID:list:query:cap:)``),
    /// those entities read by their key, with every condition of the walk.
    static func entityTableQuery(projectID: Int64, list: String, query: EntityTableQuery, ids: [UUID]? = nil) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: 10)
        func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
            bindings.append(value)
            return "$\(bindings.count)"
        }
        let key: String
        var sql = "SELECT e.id, e.label, e.revision, c.name, a.name, e.deleted, e.updated_at, e.fields FROM "
        if let ids {
            key = "e"
            sql += "entities e \(entityJoins) WHERE e.project_id = \(bind(projectID)) AND e.id = ANY(\(bind(ids))::uuid[]) AND e.list = \(bind(list))"
        } else if let filter = query.filter {
            key = "p"
            sql += "entity_properties p JOIN entities e ON e.project_id = p.project_id AND e.id = p.id \(entityJoins)"
            sql += " WHERE p.project_id = \(bind(projectID)) AND p.list = \(bind(list)) AND p.name = \(bind(filter.name))"
            let value = bind(filter.value)
            sql += " AND md5(p.value) = md5(\(value)::text) AND p.value = \(value)::text"
        } else {
            key = "e"
            sql += "entities e \(entityJoins) WHERE e.project_id = \(bind(projectID)) AND e.list = \(bind(list))"
        }
        switch query.position {
        case .first, .last: break
        case .after(let label, let id):
            sql += " AND (\(key).label COLLATE \"C\", \(key).id) > (\(bind(label))::text COLLATE \"C\", \(bind(id))::uuid)"
        case .before(let label, let id):
            sql += " AND (\(key).label COLLATE \"C\", \(key).id) < (\(bind(label))::text COLLATE \"C\", \(bind(id))::uuid)"
        }
        if let assignee = query.assignee {
            sql += " AND e.assignee_id = (SELECT u.id FROM users u WHERE u.name = \(bind(assignee))::text)"
        }
        if let search = query.search, !search.isEmpty {
            // The expression of `entities_label_trigrams`: the label with its ASCII letters folded (lower() in
            // "C" folds no other letter), against the text folded the same way.
            let pattern = "%" + EntityLabelSearch.likeEscaped(EntityLabelSearch.folded(search)) + "%"
            sql += " AND lower(e.label COLLATE \"C\") LIKE \(bind(pattern))::text"
        }
        let direction = query.readsBackwards ? "DESC" : "ASC"
        sql += " ORDER BY \(key).label COLLATE \"C\" \(direction), \(key).id \(direction) LIMIT \(bind(Int64(query.limit)))"
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }
}

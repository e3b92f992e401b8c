import Foundation
import PostgresNIO
import ServerStorage

/// The console's entity table (docs/entity-lists.md, "The console"), as on SQLite: a page of a list's entities in
/// label order (`COLLATE "C"`, byte order), by keyset, with a label search, a property filter and an assignee.
/// A property filter reads the entities with that value from `entity_properties` in label order; otherwise the
/// page walks `entities_by_label` (`entities_by_assignee` for one assignee's entities), or the planner reads a
/// search that few labels match from the trigram index of the labels (migration 17).
extension PostgresStorage {
    public func entityTable(projectID: Int64, list: String, query: EntityTableQuery) async throws -> [EntityTableRow] {
        let client = client
        let statement = Self.entityTableQuery(projectID: projectID, list: list, query: query)
        return try await perform {
            var result: [EntityTableRow] = []
            for try await (id, label, revision, creator, assignee, deleted, updated, fields) in try await client.query(statement)
                .decode((UUID, String, Int64, String, String?, Bool, Double, String).self) {
                result.append(EntityTableRow(
                    id: id, label: label, revision: revision, creatorName: creator, assigneeName: assignee, deleted: deleted,
                    updatedAt: Date(timeIntervalSince1970: updated), fields: fields))
            }
            return query.readsBackwards ? result.reversed() : result
        }
    }

    /// The statement of a page: its conditions on the rows that lead (`p`, the property's rows, for a filter;
    /// `e` otherwise), the keyset on their (label, id), in the table's order or (for `before` and `last`) against it.
    static func entityTableQuery(projectID: Int64, list: String, query: EntityTableQuery) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: 10)
        func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
            bindings.append(value)
            return "$\(bindings.count)"
        }
        let key: String
        var sql = "SELECT e.id, e.label, e.revision, c.name, a.name, e.deleted, e.updated_at, e.fields FROM "
        if let filter = query.filter {
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
            // `e.label`: ILIKE folds case by the label's collation (the database's), as the walk does; `p.label`
            // is "C", which folds ASCII letters only.
            sql += " AND e.label ILIKE \(bind("%" + likeEscaped(search) + "%"))::text"
        }
        let direction = query.readsBackwards ? "DESC" : "ASC"
        sql += " ORDER BY \(key).label COLLATE \"C\" \(direction), \(key).id \(direction) LIMIT \(bind(Int64(query.limit)))"
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }

    /// `text` for a LIKE pattern (backslash is PostgreSQL's default escape): `%`, `_` and `\` match themselves.
    static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }
}

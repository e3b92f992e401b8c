import Foundation
import FormModel
import Logging
import PostgresNIO
import ServerStorage
import SyncCore

extension PostgresStorage {
    static let entityColumns = """
        e.list, e.id, e.revision, e.sequence, e.creator_id, c.name, e.assignee_id, a.name, e.deleted, e.fields, e.created_at, e.updated_at
        """
    static let entityJoins = "JOIN users c ON c.id = e.creator_id LEFT JOIN users a ON a.id = e.assignee_id"

    // MARK: Lists

    public func entityLists(projectID: Int64) async throws -> [EntityListInfo] {
        let client = client
        return try await perform {
            try await Self.entityLists(try await client.query("""
                SELECT name, properties, scope, last_sequence FROM entity_lists WHERE project_id = \(projectID) ORDER BY name
                """))
        }
    }

    public func entityList(projectID: Int64, name: String) async throws -> EntityListInfo? {
        let client = client
        return try await perform {
            try await Self.entityLists(try await client.query("""
                SELECT name, properties, scope, last_sequence FROM entity_lists WHERE project_id = \(projectID) AND name = \(name)
                """)).first
        }
    }

    static func entityLists(_ rows: PostgresRowSequence) async throws -> [EntityListInfo] {
        var result: [EntityListInfo] = []
        for try await (name, properties, scope, last) in rows.decode((String, String, String, Int64).self) {
            result.append(EntityListInfo(name: name, properties: try EntityListInfo.properties(json: properties), scope: EntityScope(scope) ?? .all, lastSequence: last))
        }
        return result
    }

    @discardableResult
    public func declareEntityList(projectID: Int64, name: String, properties: [EntityProperty]) async throws -> EntityListInfo {
        try await transaction { connection in
            try await connection.query("""
                INSERT INTO entity_lists (project_id, name, properties, created_at) VALUES (\(projectID), \(name), '[]', \(Date().timeIntervalSince1970))
                ON CONFLICT (project_id, name) DO NOTHING
                """, logger: .quiet)
            // Locked until COMMIT: two forms declaring properties at once add both.
            let rows = try await connection.query("""
                SELECT name, properties, scope, last_sequence FROM entity_lists WHERE project_id = \(projectID) AND name = \(name) FOR UPDATE
                """, logger: .quiet)
            guard let existing = try await Self.entityLists(rows).first else { throw StorageError(.unknownEntityList, "No entity list \"\(name)\".") }
            let merged = try EntityListInfo.merging(existing.properties, properties, list: name)
            try await connection.query("""
                UPDATE entity_lists SET properties = \(EntityListInfo.propertiesJSON(merged)) WHERE project_id = \(projectID) AND name = \(name)
                """, logger: .quiet)
            return EntityListInfo(name: name, properties: merged, scope: existing.scope, lastSequence: existing.lastSequence)
        }
    }

    public func setEntityScope(projectID: Int64, list: String, scope: EntityScope) async throws {
        try await transaction { connection in
            let rows = try await connection.query("""
                UPDATE entity_lists SET scope = \(scope.description) WHERE project_id = \(projectID) AND name = \(list) RETURNING name
                """, logger: .quiet).collect()
            guard rows.count == 1 else { throw StorageError(.unknownEntityList, "This project has no entity list \"\(list)\".") }
            try await Self.moveInFeed(connection, projectID: projectID, list: list, values: nil)
        }
    }

    /// Gives the list's entities (all, or those whose scope property text is one of `values.texts`) the next
    /// numbers of the list's sequence, in their order: each is sent again by the feed, in scope or as removed.
    static func moveInFeed(_ connection: PostgresConnection, projectID: Int64, list: String, values: (property: String, texts: [String])?) async throws {
        let rows = try await connection.query("""
            SELECT last_sequence FROM entity_lists WHERE project_id = \(projectID) AND name = \(list) FOR UPDATE
            """, logger: .quiet).collect()
        guard let last = try rows.first?.decode(Int64.self) else { return }
        let moved = try await connection.query("""
            UPDATE entities SET sequence = n.sequence FROM (
                SELECT e.id, \(last) + row_number() OVER (ORDER BY e.sequence) AS sequence FROM entities e
                WHERE e.project_id = \(projectID) AND e.list = \(list)
                  AND (\(values == nil) OR (SELECT j.value FROM jsonb_each_text(e.fields::jsonb -> 'values' -> \(values?.property ?? "")::text) j LIMIT 1)
                       = ANY(\(values?.texts ?? [])::text[]))) AS n
            WHERE entities.project_id = \(projectID) AND entities.id = n.id RETURNING entities.id
            """, logger: .quiet).collect().count
        try await connection.query("""
            UPDATE entity_lists SET last_sequence = last_sequence + \(Int64(moved)) WHERE project_id = \(projectID) AND name = \(list)
            """, logger: .quiet)
    }

    // MARK: Feed and reads

    public func entityChanges(projectID: Int64, list: String, after: Int64, limit: Int, maxBytes: Int) async throws -> EntityFeedPage {
        let client = client
        return try await perform {
            let rows = try await client.query("""
                SELECT e.id, e.revision, e.sequence, e.creator_id, c.name, e.assignee_id, a.name, e.deleted, e.fields
                FROM entities e \(unescaped: Self.entityJoins)
                WHERE e.project_id = \(projectID) AND e.list = \(list) AND e.sequence > \(after) ORDER BY e.sequence LIMIT \(Int64(limit + 1))
                """)
            var result: [EntityFeedRow] = []
            var bytes = 0
            var hasMore = false
            for try await (id, revision, sequence, creatorID, creator, assigneeID, assignee, deleted, fields) in rows.decode(
                (UUID, Int64, Int64, Int64, String, Int64?, String?, Bool, String).self) {
                if hasMore { continue }
                if result.count == limit || (!result.isEmpty && bytes + fields.utf8.count > maxBytes) {
                    hasMore = true
                    continue
                }
                bytes += fields.utf8.count
                result.append(EntityFeedRow(
                    id: id, revision: revision, sequence: sequence, creatorID: creatorID, creatorName: creator, assigneeID: assigneeID,
                    assigneeName: assignee, deleted: deleted, fields: fields))
            }
            return EntityFeedPage(rows: result, hasMore: hasMore)
        }
    }

    public func entity(projectID: Int64, id: UUID) async throws -> StoredEntity? {
        let client = client
        return try await perform {
            try await client.withConnection { connection in try await Self.entities(connection, projectID: projectID, ids: [id])[id] }
        }
    }

    public func entities(projectID: Int64, list: String, after: UUID?, limit: Int) async throws -> [StoredEntity] {
        let client = client
        return try await perform {
            try await Self.storedEntities(try await client.query("""
                SELECT \(unescaped: Self.entityColumns) FROM entities e \(unescaped: Self.entityJoins)
                WHERE e.project_id = \(projectID) AND e.list = \(list) AND (\(after)::uuid IS NULL OR e.id > \(after)::uuid)
                ORDER BY e.id LIMIT \(Int64(limit))
                """))
        }
    }

    static func entities(_ connection: PostgresConnection, projectID: Int64, ids: [UUID]) async throws -> [UUID: StoredEntity] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await connection.query("""
            SELECT \(unescaped: entityColumns) FROM entities e \(unescaped: entityJoins)
            WHERE e.project_id = \(projectID) AND e.id = ANY(\(ids)::uuid[])
            """, logger: .quiet)
        return Dictionary(uniqueKeysWithValues: try await storedEntities(rows).map { ($0.id, $0) })
    }

    static func storedEntities(_ rows: PostgresRowSequence) async throws -> [StoredEntity] {
        var result: [StoredEntity] = []
        for try await (list, id, revision, sequence, creatorID, creator, assigneeID, assignee, deleted, fields, created, updated) in rows.decode(
            (String, UUID, Int64, Int64, Int64, String, Int64?, String?, Bool, String, Double, Double).self) {
            result.append(StoredEntity(
                list: list, id: id, revision: revision, sequence: sequence, creatorID: creatorID, creatorName: creator, assigneeID: assigneeID,
                assigneeName: assignee, deleted: deleted, fields: try RecordFields(jsonBytes: Array(fields.utf8)),
                createdAt: Date(timeIntervalSince1970: created), updatedAt: Date(timeIntervalSince1970: updated)))
        }
        return result
    }

    public func entityHistory(projectID: Int64, entityID: UUID) async throws -> [EntityHistoryEntry] {
        let client = client
        return try await perform {
            var result: [EntityHistoryEntry] = []
            for try await (revision, kind, recordID, userID, userName, clientID, detail, at, review) in try await client.query("""
                SELECT h.revision, h.kind, h.record_id, h.user_id, u.name, h.client_id, h.detail, h.created_at, r.review_state
                FROM entity_history h JOIN users u ON u.id = h.user_id
                LEFT JOIN records r ON r.project_id = h.project_id AND r.id = h.record_id
                WHERE h.project_id = \(projectID) AND h.entity_id = \(entityID) ORDER BY h.id
                """).decode((Int64, String, UUID?, Int64, String, String?, String, Double, String?).self) {
                result.append(EntityHistoryEntry(
                    entityID: entityID, revision: revision, kind: EntityHistoryEntry.Kind(rawValue: kind) ?? .update, recordID: recordID,
                    userID: userID, userName: userName, clientID: clientID, at: Date(timeIntervalSince1970: at), detail: try HistoryDetail(jsonText: detail),
                    recordReview: review.flatMap(ReviewState.init(rawValue:))))
            }
            return result
        }
    }

    public func entityConflicts(projectID: Int64, entityID: UUID) async throws -> [LoggedEntityConflict] {
        let client = client
        return try await perform {
            var result: [LoggedEntityConflict] = []
            for try await (recordID, mutationID, clientID, entry, at) in try await client.query("""
                SELECT record_id, mutation_id, client_id, entry, created_at FROM entity_conflicts
                WHERE project_id = \(projectID) AND entity_id = \(entityID) ORDER BY id
                """).decode((UUID, String, String, String, Double).self) {
                var reader = JSONReader(Array(entry.utf8))
                result.append(LoggedEntityConflict(
                    entityID: entityID, recordID: recordID, mutationID: mutationID, clientID: clientID,
                    entry: try ConflictEntry.read(from: &reader), at: Date(timeIntervalSince1970: at)))
            }
            return result
        }
    }

    // MARK: Writes

    /// Writes entities (each once) with the next numbers of their lists' sequences (each list's row stays
    /// locked until COMMIT: the list's serialized commit step), their history and conflicts, inside the
    /// caller's transaction; sets each written entity's ``StoredEntity/sequence``.
    static func writeEntities(
        _ connection: PostgresConnection, projectID: Int64, _ entities: inout [StoredEntity], history: [EntityHistoryEntry],
        conflicts: [LoggedEntityConflict], now: Double
    ) async throws {
        guard !entities.isEmpty || !history.isEmpty || !conflicts.isEmpty else { return }
        var byList: [String: [Int]] = [:]
        for (index, entity) in entities.enumerated() { byList[entity.list, default: []].append(index) }
        for list in byList.keys.sorted() {
            let indices = byList[list]!
            try await connection.query("""
                INSERT INTO entity_lists (project_id, name, properties, created_at) VALUES (\(projectID), \(list), '[]', \(now))
                ON CONFLICT (project_id, name) DO NOTHING
                """, logger: .quiet)
            let count = Int64(indices.count)
            let rows = try await connection.query("""
                UPDATE entity_lists SET last_sequence = last_sequence + \(count) WHERE project_id = \(projectID) AND name = \(list) RETURNING last_sequence
                """, logger: .quiet).collect()
            let last = try rows.first?.decode(Int64.self) ?? count
            for (offset, index) in indices.enumerated() { entities[index].sequence = last - count + 1 + Int64(offset) }
        }
        if !entities.isEmpty {
            let written = entities
            try await connection.query("""
                INSERT INTO entities (project_id, id, list, revision, sequence, creator_id, assignee_id, deleted, label, fields, created_at, updated_at)
                SELECT \(projectID), e.id, e.list, e.revision, e.sequence, e.creator_id, NULLIF(e.assignee_id, 0), e.deleted, e.label, e.fields,
                    e.created_at, e.updated_at
                FROM unnest(
                    \(written.map(\.id))::uuid[], \(written.map(\.list))::text[], \(written.map(\.revision))::int8[], \(written.map(\.sequence))::int8[],
                    \(written.map(\.creatorID))::int8[], \(written.map { $0.assigneeID ?? 0 })::int8[], \(written.map(\.deleted))::bool[],
                    \(written.map(\.label))::text[], \(written.map { String(decoding: $0.fields.jsonBytes(), as: UTF8.self) })::text[],
                    \(written.map { $0.createdAt?.timeIntervalSince1970 ?? now })::float8[], \(written.map { $0.updatedAt?.timeIntervalSince1970 ?? now })::float8[]
                ) AS e (id, list, revision, sequence, creator_id, assignee_id, deleted, label, fields, created_at, updated_at)
                ON CONFLICT (project_id, id) DO UPDATE SET
                    revision = excluded.revision, sequence = excluded.sequence, assignee_id = excluded.assignee_id, deleted = excluded.deleted,
                    label = excluded.label, fields = excluded.fields, updated_at = excluded.updated_at
                """, logger: .quiet)
        }
        if !history.isEmpty {
            try await connection.query("""
                INSERT INTO entity_history (project_id, entity_id, revision, kind, record_id, user_id, client_id, detail, created_at)
                SELECT \(projectID), h.entity_id, h.revision, h.kind, NULLIF(h.record_id, ''::text)::uuid, h.user_id, NULLIF(h.client_id, ''), h.detail, h.created_at
                FROM unnest(
                    \(history.map(\.entityID))::uuid[], \(history.map(\.revision))::int8[], \(history.map(\.kind.rawValue))::text[],
                    \(history.map { $0.recordID?.lowercased ?? "" })::text[], \(history.map(\.userID))::int8[], \(history.map { $0.clientID ?? "" })::text[],
                    \(history.map { String(decoding: $0.detail.jsonBytes(), as: UTF8.self) })::text[], \(history.map(\.at.timeIntervalSince1970))::float8[]
                ) WITH ORDINALITY AS h (entity_id, revision, kind, record_id, user_id, client_id, detail, created_at, n) ORDER BY h.n
                """, logger: .quiet)
        }
        if !conflicts.isEmpty {
            try await connection.query("""
                INSERT INTO entity_conflicts (project_id, entity_id, record_id, mutation_id, client_id, entry, created_at)
                SELECT \(projectID), c.entity_id, c.record_id, c.mutation_id, c.client_id, c.entry, \(now) FROM unnest(
                    \(conflicts.map(\.entityID))::uuid[], \(conflicts.map(\.recordID))::uuid[], \(conflicts.map(\.mutationID))::text[],
                    \(conflicts.map(\.clientID))::text[], \(conflicts.map { String(decoding: $0.entry.jsonBytes(), as: UTF8.self) })::text[]
                ) WITH ORDINALITY AS c (entity_id, record_id, mutation_id, client_id, entry, n) ORDER BY c.n
                """, logger: .quiet)
        }
    }

    public func writeEntities(projectID: Int64, list: String, _ entities: [StoredEntity], history: [EntityHistoryEntry]) async throws {
        try await transaction { connection in
            let existing = try await Self.entities(connection, projectID: projectID, ids: entities.map(\.id))
            if let other = entities.first(where: { existing[$0.id].map { $0.list != list } ?? false }) {
                throw StorageError(.entityConflict, "The id \(other.id.lowercased) is taken by an entity of the list \"\(existing[other.id]?.list ?? "")\".")
            }
            var written = entities
            try await Self.writeEntities(connection, projectID: projectID, &written, history: history, conflicts: [], now: Date().timeIntervalSince1970)
        }
    }

    static func memberID(_ connection: PostgresConnection, projectID: Int64, userName: String) async throws -> Int64 {
        let rows = try await connection.query("""
            SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id WHERE u.name = \(userName) AND m.project_id = \(projectID)
            """, logger: .quiet).collect()
        guard let id = try rows.first?.decode(Int64.self) else {
            throw StorageError(.unknownUser, "\"\(userName)\" is not a member of this project.")
        }
        return id
    }

    public func assignEntities(projectID: Int64, list: String, ids: [UUID], userName: String?, by userID: Int64) async throws -> Int {
        try await transaction { connection in
            var assignee: Int64?
            if let userName { assignee = try await Self.memberID(connection, projectID: projectID, userName: userName) }
            let now = Date()
            var entities = try await Self.entities(connection, projectID: projectID, ids: ids).values.filter { $0.list == list }
                .sorted { $0.id.uuidString < $1.id.uuidString }
            let found = entities.count
            var history: [EntityHistoryEntry] = []
            var changed: [StoredEntity] = []
            for index in entities.indices where entities[index].assigneeID != assignee {
                entities[index].assigneeID = assignee
                entities[index].revision += 1
                entities[index].updatedAt = now
                changed.append(entities[index])
                history.append(EntityHistoryEntry(
                    entityID: entities[index].id, revision: entities[index].revision, kind: .assign, recordID: nil, userID: userID, clientID: nil,
                    at: now, detail: HistoryDetail(fields: ["@assignee": .init(from: nil, to: userName.map { .text($0) })])))
            }
            try await Self.writeEntities(connection, projectID: projectID, &changed, history: history, conflicts: [], now: now.timeIntervalSince1970)
            return found
        }
    }

    public func editEntity(projectID: Int64, list: String, id: UUID, edit: EntityEdit, by userID: Int64) async throws -> EntityEdit.Outcome {
        try await transaction { connection in
            // The entity's lock, as a push that changes it takes it: the merge reads what no push is changing.
            _ = try await connection.query(
                "SELECT pg_advisory_xact_lock(\(Self.lockKey("\(projectID)/entity/\(id.lowercased)")))", logger: .quiet).collect()
            let now = Date()
            let stored = try await Self.entities(connection, projectID: projectID, ids: [id])[id]
            let (outcome, written, history) = edit.apply(to: stored, list: list, userID: userID, at: now)
            guard let written, let history else { return outcome }
            var entities = [written]
            try await Self.writeEntities(connection, projectID: projectID, &entities, history: [history], conflicts: [], now: now.timeIntervalSince1970)
            guard case .applied(_, let changes) = outcome else { return outcome }
            return .applied(entities[0], changes: changes)
        }
    }

    public func deleteEntity(projectID: Int64, list: String, id: UUID, by userID: Int64) async throws -> Bool {
        try await transaction { connection in
            guard var entity = try await Self.entities(connection, projectID: projectID, ids: [id])[id], entity.list == list else { return false }
            guard !entity.deleted else { return true }
            let now = Date()
            entity.deleted = true
            entity.revision += 1
            entity.updatedAt = now
            var written = [entity]
            try await Self.writeEntities(connection, projectID: projectID, &written, history: [EntityHistoryEntry(
                entityID: id, revision: entity.revision, kind: .delete, recordID: nil, userID: userID, clientID: nil, at: now, detail: HistoryDetail())],
                conflicts: [], now: now.timeIntervalSince1970)
            return true
        }
    }

    // MARK: User properties

    public func memberIDs(projectID: Int64) async throws -> [String: Int64] {
        let client = client
        return try await perform {
            var result: [String: Int64] = [:]
            for try await (name, id) in try await client.query("""
                SELECT u.name, u.id FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.project_id = \(projectID)
                """).decode((String, Int64).self) {
                result[name] = id
            }
            return result
        }
    }

    public func userProperties(projectID: Int64, userID: Int64) async throws -> [String: String] {
        let client = client
        return try await perform {
            var result: [String: String] = [:]
            for try await (name, value) in try await client.query("""
                SELECT name, value FROM user_properties WHERE project_id = \(projectID) AND user_id = \(userID)
                """).decode((String, String).self) {
                result[name] = value
            }
            return result
        }
    }

    public func setUserProperty(projectID: Int64, userName: String, name: String, value: String?) async throws {
        try await transaction { connection in
            let userID = try await Self.memberID(connection, projectID: projectID, userName: userName)
            let rows = try await connection.query("""
                SELECT value FROM user_properties WHERE project_id = \(projectID) AND user_id = \(userID) AND name = \(name) FOR UPDATE
                """, logger: .quiet).collect()
            let old = try rows.first?.decode(String.self)
            guard old != value else { return }
            if let value {
                try await connection.query("""
                    INSERT INTO user_properties (project_id, user_id, name, value) VALUES (\(projectID), \(userID), \(name), \(value))
                    ON CONFLICT (project_id, user_id, name) DO UPDATE SET value = excluded.value
                    """, logger: .quiet)
            } else {
                try await connection.query("""
                    DELETE FROM user_properties WHERE project_id = \(projectID) AND user_id = \(userID) AND name = \(name)
                    """, logger: .quiet)
            }
            var lists: [String] = []
            for try await list in try await connection.query("""
                SELECT name FROM entity_lists WHERE project_id = \(projectID) AND scope = \(EntityScope.userProperty(name).description)
                """, logger: .quiet).decode(String.self) {
                lists.append(list)
            }
            for list in lists {
                try await Self.moveInFeed(connection, projectID: projectID, list: list, values: (name, [old, value].compactMap { $0 }))
            }
        }
    }
}

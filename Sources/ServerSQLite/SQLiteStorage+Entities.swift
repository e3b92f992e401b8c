import Foundation
import FormModel
import GRDB
import ServerStorage
import SyncCore

extension SQLiteStorage {
    static let entityColumns = """
        e.list, e.id, e.revision, e.sequence, e.creator_id, c.name AS creator_name, e.assignee_id, a.name AS assignee_name, e.deleted,
        e.fields, e.created_at, e.updated_at
        """
    static let entityJoins = "JOIN users c ON c.id = e.creator_id LEFT JOIN users a ON a.id = e.assignee_id"

    // MARK: Lists

    public func entityLists(projectID: Int64) async throws -> [EntityListInfo] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT name, properties, scope, last_sequence FROM entity_lists WHERE project_id = ? ORDER BY name", arguments: [projectID])
                .map(Self.entityList)
        }
    }

    public func entityList(projectID: Int64, name: String) async throws -> EntityListInfo? {
        try await pool.read { db in try Self.entityList(db, projectID: projectID, name: name) }
    }

    static func entityList(_ db: Database, projectID: Int64, name: String) throws -> EntityListInfo? {
        try Row.fetchOne(db, sql: "SELECT name, properties, scope, last_sequence FROM entity_lists WHERE project_id = ? AND name = ?", arguments: [projectID, name])
            .map(entityList)
    }

    static func entityList(_ row: Row) throws -> EntityListInfo {
        EntityListInfo(
            name: row[0], properties: try EntityListInfo.properties(json: row[1]), scope: EntityScope(row[2] as String) ?? .all, lastSequence: row[3])
    }

    @discardableResult
    public func declareEntityList(projectID: Int64, name: String, properties: [EntityProperty]) async throws -> EntityListInfo {
        try await write { db in
            let existing = try Self.entityList(db, projectID: projectID, name: name)
            let merged = try EntityListInfo.merging(existing?.properties ?? [], properties, list: name)
            try db.execute(sql: """
                INSERT INTO entity_lists (project_id, name, properties, created_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (project_id, name) DO UPDATE SET properties = excluded.properties
                """, arguments: [projectID, name, EntityListInfo.propertiesJSON(merged), Date().timeIntervalSince1970])
            return EntityListInfo(name: name, properties: merged, scope: existing?.scope ?? .all, lastSequence: existing?.lastSequence ?? 0)
        }
    }

    public func setEntityScope(projectID: Int64, list: String, scope: EntityScope) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE entity_lists SET scope = ? WHERE project_id = ? AND name = ?", arguments: [scope.description, projectID, list])
            guard db.changesCount == 1 else { throw StorageError(.unknownEntityList, "This project has no entity list \"\(list)\".") }
            try Self.moveInFeed(db, projectID: projectID, list: list, where: "1", arguments: [])
        }
    }

    /// Gives the list's entities matching `condition` (over `e`) the next numbers of the list's sequence, in
    /// their order: each is sent again by the feed, in scope or as removed.
    static func moveInFeed(_ db: Database, projectID: Int64, list: String, where condition: String, arguments: StatementArguments) throws {
        guard let last = try Int64.fetchOne(db, sql: "SELECT last_sequence FROM entity_lists WHERE project_id = ? AND name = ?", arguments: [projectID, list]) else { return }
        try db.execute(sql: """
            UPDATE entities SET sequence = n.sequence FROM (
                SELECT e.id, ? + row_number() OVER (ORDER BY e.sequence) AS sequence FROM entities e
                WHERE e.project_id = ? AND e.list = ? AND (\(condition))) AS n
            WHERE entities.project_id = ? AND entities.id = n.id
            """, arguments: [last, projectID, list] + arguments + [projectID])
        let moved = Int64(db.changesCount)
        try db.execute(sql: "UPDATE entity_lists SET last_sequence = last_sequence + ? WHERE project_id = ? AND name = ?", arguments: [moved, projectID, list])
    }

    // MARK: Feed and reads

    public func entityChanges(projectID: Int64, list: String, after: Int64, limit: Int, maxBytes: Int) async throws -> EntityFeedPage {
        try await pool.read { db in
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT e.id, e.revision, e.sequence, e.creator_id, c.name, e.assignee_id, a.name, e.deleted, e.fields
                FROM entities e \(Self.entityJoins)
                WHERE e.project_id = ? AND e.list = ? AND e.sequence > ? ORDER BY e.sequence LIMIT ?
                """), arguments: [projectID, list, after, limit + 1])
            var result: [EntityFeedRow] = []
            var bytes = 0
            while let row = try rows.next() {
                let fields: String = row[8]
                if result.count == limit || (!result.isEmpty && bytes + fields.utf8.count > maxBytes) {
                    return EntityFeedPage(rows: result, hasMore: true)
                }
                bytes += fields.utf8.count
                result.append(EntityFeedRow(
                    id: UUID(text: row[0]) ?? UUID(), revision: row[1], sequence: row[2], creatorID: row[3], creatorName: row[4],
                    assigneeID: row[5], assigneeName: row[6], deleted: row[7], fields: fields))
            }
            return EntityFeedPage(rows: result, hasMore: false)
        }
    }

    public func entity(projectID: Int64, id: UUID) async throws -> StoredEntity? {
        try await pool.read { db in try Self.entities(db, projectID: projectID, ids: [id])[id] }
    }

    public func entities(projectID: Int64, list: String, after: UUID?, limit: Int) async throws -> [StoredEntity] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.entityColumns) FROM entities e \(Self.entityJoins)
                WHERE e.project_id = ? AND e.list = ? AND e.id > ? ORDER BY e.id LIMIT ?
                """, arguments: [projectID, list, after?.lowercased ?? "", limit]).map(Self.storedEntity)
        }
    }

    static func entities(_ db: Database, projectID: Int64, ids: [UUID]) throws -> [UUID: StoredEntity] {
        guard !ids.isEmpty else { return [:] }
        var result: [UUID: StoredEntity] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT \(entityColumns) FROM entities e \(entityJoins)
            WHERE e.project_id = ? AND e.id IN (SELECT value FROM json_each(?))
            """), arguments: [projectID, JSONWriter.array(of: ids.map(\.lowercased))]) {
            let entity = try storedEntity(row)
            result[entity.id] = entity
        }
        return result
    }

    static func storedEntity(_ row: Row) throws -> StoredEntity {
        let fields: String = row["fields"]
        return StoredEntity(
            list: row["list"], id: UUID(text: row["id"]) ?? UUID(), revision: row["revision"], sequence: row["sequence"],
            creatorID: row["creator_id"], creatorName: row["creator_name"], assigneeID: row["assignee_id"], assigneeName: row["assignee_name"],
            deleted: row["deleted"], fields: try RecordFields(jsonBytes: Array(fields.utf8)),
            createdAt: date(row["created_at"]), updatedAt: date(row["updated_at"]))
    }

    public func entityHistory(projectID: Int64, entityID: UUID) async throws -> [EntityHistoryEntry] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT h.revision, h.kind, h.record_id, h.user_id, u.name, h.client_id, h.detail, h.created_at, r.review_state
                FROM entity_history h JOIN users u ON u.id = h.user_id
                LEFT JOIN records r ON r.project_id = h.project_id AND r.id = h.record_id
                WHERE h.project_id = ? AND h.entity_id = ? ORDER BY h.id
                """, arguments: [projectID, entityID.lowercased]).map { row in
                EntityHistoryEntry(
                    entityID: entityID, revision: row[0], kind: EntityHistoryEntry.Kind(rawValue: row[1]) ?? .update,
                    recordID: (row[2] as String?).flatMap(UUID.init(text:)), userID: row[3], userName: row[4], clientID: row[5],
                    at: Date(timeIntervalSince1970: row[7]), detail: try HistoryDetail(jsonText: row[6]),
                    recordReview: (row[8] as String?).flatMap(ReviewState.init(rawValue:)))
            }
        }
    }

    public func entityConflicts(projectID: Int64, entityID: UUID) async throws -> [LoggedEntityConflict] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT record_id, mutation_id, client_id, entry, created_at FROM entity_conflicts WHERE project_id = ? AND entity_id = ? ORDER BY id
                """, arguments: [projectID, entityID.lowercased]).map { row in
                let entry: String = row[3]
                var reader = JSONReader(Array(entry.utf8))
                return LoggedEntityConflict(
                    entityID: entityID, recordID: UUID(text: row[0]) ?? UUID(), mutationID: row[1], clientID: row[2],
                    entry: try ConflictEntry.read(from: &reader), at: Date(timeIntervalSince1970: row[4]))
            }
        }
    }

    // MARK: Writes

    /// Writes entities (each once) with the next numbers of their lists' sequences, their history and
    /// conflicts, inside the caller's transaction; sets each written entity's ``StoredEntity/sequence``.
    static func writeEntities(
        _ db: Database, projectID: Int64, _ entities: inout [StoredEntity], history: [EntityHistoryEntry], conflicts: [LoggedEntityConflict], now: Double
    ) throws {
        guard !entities.isEmpty || !history.isEmpty || !conflicts.isEmpty else { return }
        var byList: [String: [Int]] = [:]
        for (index, entity) in entities.enumerated() { byList[entity.list, default: []].append(index) }
        for list in byList.keys.sorted() {
            let indices = byList[list]!
            try db.execute(sql: """
                INSERT INTO entity_lists (project_id, name, properties, created_at) VALUES (?, ?, '[]', ?) ON CONFLICT (project_id, name) DO NOTHING
                """, arguments: [projectID, list, now])
            let count = Int64(indices.count)
            // The list's serialized commit step, as the project's sequence for records (see ServerStorage).
            let last = try Int64.fetchOne(
                db, sql: "UPDATE entity_lists SET last_sequence = last_sequence + ? WHERE project_id = ? AND name = ? RETURNING last_sequence",
                arguments: [count, projectID, list]) ?? count
            for (offset, index) in indices.enumerated() { entities[index].sequence = last - count + 1 + Int64(offset) }
        }
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO entities (project_id, id, list, revision, sequence, creator_id, assignee_id, deleted, label, fields, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (project_id, id) DO UPDATE SET
                revision = excluded.revision, sequence = excluded.sequence, assignee_id = excluded.assignee_id, deleted = excluded.deleted,
                label = excluded.label, fields = excluded.fields, updated_at = excluded.updated_at
            """)
        for entity in entities {
            try upsert.execute(arguments: [
                projectID, entity.id.lowercased, entity.list, entity.revision, entity.sequence, entity.creatorID, entity.assigneeID, entity.deleted,
                entity.label, String(decoding: entity.fields.jsonBytes(), as: UTF8.self), entity.createdAt?.timeIntervalSince1970 ?? now,
                entity.updatedAt?.timeIntervalSince1970 ?? now,
            ])
        }
        let insertHistory = try db.cachedStatement(sql: """
            INSERT INTO entity_history (project_id, entity_id, revision, kind, record_id, user_id, client_id, detail, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for entry in history {
            try insertHistory.execute(arguments: [
                projectID, entry.entityID.lowercased, entry.revision, entry.kind.rawValue, entry.recordID?.lowercased, entry.userID, entry.clientID,
                String(decoding: entry.detail.jsonBytes(), as: UTF8.self), entry.at.timeIntervalSince1970,
            ])
        }
        let insertConflict = try db.cachedStatement(sql: """
            INSERT INTO entity_conflicts (project_id, entity_id, record_id, mutation_id, client_id, entry, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        for conflict in conflicts {
            try insertConflict.execute(arguments: [
                projectID, conflict.entityID.lowercased, conflict.recordID.lowercased, conflict.mutationID, conflict.clientID,
                String(decoding: conflict.entry.jsonBytes(), as: UTF8.self), now,
            ])
        }
    }

    public func writeEntities(projectID: Int64, list: String, _ entities: [StoredEntity], history: [EntityHistoryEntry]) async throws {
        try await write { db in
            let existing = try Self.entities(db, projectID: projectID, ids: entities.map(\.id))
            if let other = entities.first(where: { existing[$0.id].map { $0.list != list } ?? false }) {
                throw StorageError(.entityConflict, "The id \(other.id.lowercased) is taken by an entity of the list \"\(existing[other.id]?.list ?? "")\".")
            }
            var written = entities
            try Self.writeEntities(db, projectID: projectID, &written, history: history, conflicts: [], now: Date().timeIntervalSince1970)
        }
    }

    public func assignEntities(projectID: Int64, list: String, ids: [UUID], userName: String?, by userID: Int64) async throws -> Int {
        try await write { db in
            var assignee: Int64?
            if let userName {
                guard let id = try Int64.fetchOne(db, sql: """
                    SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id WHERE u.name = ? AND m.project_id = ?
                    """, arguments: [userName, projectID]) else {
                    throw StorageError(.unknownUser, "\"\(userName)\" is not a member of this project.")
                }
                assignee = id
            }
            let now = Date()
            var entities = try Self.entities(db, projectID: projectID, ids: ids).values.filter { $0.list == list }.sorted { $0.id.uuidString < $1.id.uuidString }
            var history: [EntityHistoryEntry] = []
            for index in entities.indices where entities[index].assigneeID != assignee {
                entities[index].assigneeID = assignee
                entities[index].revision += 1
                entities[index].updatedAt = now
                history.append(EntityHistoryEntry(
                    entityID: entities[index].id, revision: entities[index].revision, kind: .assign, recordID: nil, userID: userID, clientID: nil,
                    at: now, detail: HistoryDetail(fields: ["@assignee": .init(from: nil, to: userName.map { .text($0) })])))
            }
            let found = entities.count
            var changed = entities.filter { entity in history.contains { $0.entityID == entity.id } }
            try Self.writeEntities(db, projectID: projectID, &changed, history: history, conflicts: [], now: now.timeIntervalSince1970)
            return found
        }
    }

    public func editEntity(projectID: Int64, list: String, id: UUID, edit: EntityEdit, by userID: Int64) async throws -> EntityEdit.Outcome {
        try await write { db in
            let now = Date()
            let (outcome, written, history) = edit.apply(to: try Self.entities(db, projectID: projectID, ids: [id])[id], list: list, userID: userID, at: now)
            guard let written, let history else { return outcome }
            var entities = [written]
            try Self.writeEntities(db, projectID: projectID, &entities, history: [history], conflicts: [], now: now.timeIntervalSince1970)
            guard case .applied(_, let changes) = outcome else { return outcome }
            return .applied(entities[0], changes: changes)
        }
    }

    public func deleteEntity(projectID: Int64, list: String, id: UUID, by userID: Int64) async throws -> Bool {
        try await write { db in
            guard var entity = try Self.entities(db, projectID: projectID, ids: [id])[id], entity.list == list else { return false }
            guard !entity.deleted else { return true }
            let now = Date()
            entity.deleted = true
            entity.revision += 1
            entity.updatedAt = now
            var written = [entity]
            try Self.writeEntities(db, projectID: projectID, &written, history: [EntityHistoryEntry(
                entityID: id, revision: entity.revision, kind: .delete, recordID: nil, userID: userID, clientID: nil, at: now, detail: HistoryDetail())],
                conflicts: [], now: now.timeIntervalSince1970)
            return true
        }
    }

    // MARK: User properties

    public func memberIDs(projectID: Int64) async throws -> [String: Int64] {
        try await pool.read { db in
            var result: [String: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT u.name, u.id FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.project_id = ?", arguments: [projectID]) {
                result[row[0]] = row[1]
            }
            return result
        }
    }

    public func userProperties(projectID: Int64, userID: Int64) async throws -> [String: String] {
        try await pool.read { db in
            var result: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, value FROM user_properties WHERE project_id = ? AND user_id = ?", arguments: [projectID, userID]) {
                result[row[0]] = row[1]
            }
            return result
        }
    }

    public func setUserProperty(projectID: Int64, userName: String, name: String, value: String?) async throws {
        try await write { db in
            guard let userID = try Int64.fetchOne(db, sql: """
                SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id WHERE u.name = ? AND m.project_id = ?
                """, arguments: [userName, projectID]) else {
                throw StorageError(.unknownUser, "\"\(userName)\" is not a member of this project.")
            }
            let old = try String.fetchOne(
                db, sql: "SELECT value FROM user_properties WHERE project_id = ? AND user_id = ? AND name = ?", arguments: [projectID, userID, name])
            guard old != value else { return }
            if let value {
                try db.execute(sql: """
                    INSERT INTO user_properties (project_id, user_id, name, value) VALUES (?, ?, ?, ?)
                    ON CONFLICT (project_id, user_id, name) DO UPDATE SET value = excluded.value
                    """, arguments: [projectID, userID, name, value])
            } else {
                try db.execute(sql: "DELETE FROM user_properties WHERE project_id = ? AND user_id = ? AND name = ?", arguments: [projectID, userID, name])
            }
            let values = [old, value].compactMap { $0 }
            for list in try String.fetchAll(db, sql: "SELECT name FROM entity_lists WHERE project_id = ? AND scope = ?", arguments: [projectID, EntityScope.userProperty(name).description]) {
                try Self.moveInFeed(
                    db, projectID: projectID, list: list, where: "\(Self.propertyText("e.fields")) IN (SELECT value FROM json_each(?))",
                    arguments: [Self.propertyPath(name), JSONWriter.array(of: values)])
            }
        }
    }

    /// The text of the property the path argument (``propertyPath(_:)``) names, in `fields`: the one member of
    /// its value object, as text (`{"text":"north"}` → `north`, `{"integer":3}` → `3`).
    static func propertyText(_ fields: String) -> String {
        "(SELECT CAST(j.value AS TEXT) FROM json_each(\(fields), ?) j LIMIT 1)"
    }

    static func propertyPath(_ name: String) -> String {
        "$.values.\"" + name.replacingOccurrences(of: "\"", with: "") + "\""
    }
}

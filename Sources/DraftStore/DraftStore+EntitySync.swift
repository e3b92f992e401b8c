import Foundation
import FormModel
import GRDB
internal import SyncCore

/// A list's feed pages applied to the device (docs/entity-lists.md, "On the device"): entities stored from the
/// page's bytes, scope removals, and the local changes the server has caught up with dropped.
extension DraftStore {
    /// The entity lists this device's forms use: the list a form saves to, every `choicesFrom` list, and every
    /// list an `entity(…)` expression names, over every stored form version, sorted.
    package func entityListsInUse() async throws -> [String] {
        let definitions = try await read(doing: "reading the forms' entity lists") { db in
            try String.fetchAll(db, sql: "SELECT definition FROM forms WHERE definition LIKE '%entity%'")
        }
        var lists = Set<String>()
        for json in definitions {
            guard let form = try? JSONDecoder().decode(FormDefinition.self, from: Data(json.utf8)) else { continue }
            lists.formUnion(form.entityListsUsed)
        }
        return lists.sorted()
    }

    /// How many entities of `list` the device holds as the server sent them, and how many local changes of
    /// its records wait to come back from the server.
    package func entityStorageCounts(list: String) async throws -> (entities: Int, localChanges: Int) {
        try await read(doing: "counting the entities of \(list)") { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM entities WHERE list = ?", arguments: [list]) ?? 0,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM entity_local_changes WHERE list = ?", arguments: [list]) ?? 0)
        }
    }

    /// The feed cursor of `list` (0 before its first page).
    package func entityCursor(list: String) async throws -> Int64 {
        try await read(doing: "reading the cursor of the entity list \(list)") { db in
            try Int64.fetchOne(db, sql: "SELECT cursor FROM entity_cursors WHERE list = ?", arguments: [list]) ?? 0
        }
    }

    /// Applies one page of `list`'s entity feed as the server sent it, with its cursor, in one transaction:
    /// each entity's fields are stored as the bytes the page carried (sealed as they are in an encrypted store,
    /// never decoded and written again; the label read out of them while the page is read), the ids in
    /// `removed` leave with whatever this device changed of them, and a local change leaves once the server's
    /// entity carries a stamp at least as new for its property.
    ///
    /// A page the feed has more after commits without waiting for the disk (``unsyncedWrite(doing:_:)``): a
    /// power cut may lose the last pages applied, and their cursor with them, so the next sync asks for them
    /// again; nothing else depends on them. After the last page the list's cursor is written again in a commit
    /// that waits for the disk, which makes every page before it durable too: the sync pays that wait once,
    /// not the next edit made on the device.
    /// - Throws: `JSONReadError` (nothing applied) for a page that cannot be read.
    package func applyEntityPage(list: String, _ bytes: [UInt8]) async throws -> EntityPageApplication {
        let cipher = encryption.current.cipher
        let result = try await unsyncedWrite(doing: "applying the entity list \(list)") { db -> Result<EntityPageApplication, JSONReadError> in
            var outcome: Result<EntityPageApplication, JSONReadError> = .failure(JSONReader([]).error("no page"))
            try db.inSavepoint {
                do {
                    outcome = .success(try Self.applyEntityPage(db, list: list, bytes, cipher: cipher))
                    return .commit
                } catch let error as JSONReadError {
                    outcome = .failure(error)
                    return .rollback
                }
            }
            return outcome
        }
        let application = try result.get()
        if !application.hasMore {
            try await write(doing: "storing the entity list \(list)") { db in
                try db.execute(sql: "UPDATE entity_cursors SET cursor = cursor WHERE list = ?", arguments: [list])
            }
        }
        return application
    }

    /// One entity of a feed page, as it is stored.
    struct StoredEntityRow {
        var id: String
        var revision: Int64
        var sequence: Int64
        var creator: String
        var assignee: String?
        /// The fields' bytes as the page carried them: sealed (a BLOB) in an encrypted store, else the text.
        var fields: DatabaseValue
        var label: String?
    }

    /// How many entities one upsert statement stores (8 parameters each, well within SQLite's limit).
    static let entityUpsertRows = 100

    /// The upsert of `rows` entities of one list in one statement: `?1` is the list, then seven parameters an
    /// entity (id, revision, sequence, creator, assignee, fields, label).
    static func entityUpsertSQL(rows: Int) -> String {
        var sql = "INSERT INTO entities (list, id, revision, sequence, creator, assignee, fields, label) VALUES "
        for row in 0..<rows {
            let first = 2 + row * 7
            if row > 0 { sql += ", " }
            sql += "(?1, " + (first..<(first + 7)).map { "?\($0)" }.joined(separator: ", ") + ")"
        }
        return sql + """
             ON CONFLICT (list, id) DO UPDATE SET revision = excluded.revision, sequence = excluded.sequence, creator = excluded.creator,
                assignee = excluded.assignee, fields = excluded.fields, label = excluded.label
            """
    }

    static let fullEntityUpsertSQL = entityUpsertSQL(rows: entityUpsertRows)

    /// Stores `rows` of `list` with as few statements as their count allows.
    static func upsertEntities(_ db: Database, list: String, _ rows: [StoredEntityRow]) throws {
        var start = 0
        while start < rows.count {
            let count = min(entityUpsertRows, rows.count - start)
            let statement = try db.cachedStatement(sql: count == entityUpsertRows ? fullEntityUpsertSQL : entityUpsertSQL(rows: count))
            var values: [DatabaseValue] = [list.databaseValue]
            values.reserveCapacity(1 + count * 7)
            for row in rows[start..<(start + count)] {
                values.append(row.id.databaseValue)
                values.append(row.revision.databaseValue)
                values.append(row.sequence.databaseValue)
                values.append(row.creator.databaseValue)
                values.append(row.assignee?.databaseValue ?? .null)
                values.append(row.fields)
                values.append(row.label?.databaseValue ?? .null)
            }
            try statement.execute(arguments: StatementArguments(values))
            start += count
        }
    }

    /// Reads an entity's `fields` (a ``RecordFields`` object) where `reader` stands: the byte range it takes and
    /// its label (`values.label.text`), without building the fields.
    static func readEntityFields(_ reader: inout JSONReader) throws -> (range: Range<Int>, label: String?) {
        _ = reader.peek()
        let start = reader.offset
        var label: String?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            guard key == "values" else {
                try reader.skipValue()
                continue
            }
            try reader.beginObject()
            while let field = try reader.nextKey() {
                guard field == StoredEntityKeys.label, reader.peek() == UInt8(ascii: "{") else {
                    try reader.skipValue()
                    continue
                }
                try reader.beginObject()
                while let kind = try reader.nextKey() {
                    if kind == "text", reader.peek() == UInt8(ascii: "\"") { label = try reader.readString() } else { try reader.skipValue() }
                }
            }
        }
        return (start..<reader.offset, label)
    }

    static func applyEntityPage(_ db: Database, list: String, _ bytes: [UInt8], cipher: DeviceCipher?) throws -> EntityPageApplication {
        // The entities this device changed and the server has not sent back: only those are read.
        var pending = Set(try String.fetchAll(db.cachedStatement(sql: "SELECT DISTINCT entity_id FROM entity_local_changes WHERE list = ?"), arguments: [list]))
        let remove = try db.cachedStatement(sql: "DELETE FROM entities WHERE list = ? AND id = ?")
        let forget = try db.cachedStatement(sql: "DELETE FROM entity_local_changes WHERE list = ? AND entity_id = ?")
        var reader = JSONReader(bytes)
        var stored = 0
        var removed = 0
        var cursor: Int64?
        var hasMore = false
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "list":
                let named = try reader.readString()
                guard named == list else { throw reader.error("The page is of the list \"\(named)\", asked for \"\(list)\"") }
            case "changes":
                var rows: [StoredEntityRow] = []
                try reader.beginArray()
                while try reader.nextElement() {
                    var id: String?
                    var revision: Int64?
                    var sequence: Int64?
                    var creator: String?
                    var assignee: String?
                    var fields: (range: Range<Int>, label: String?)?
                    try reader.beginObject()
                    while let member = try reader.nextKey() {
                        switch member {
                        case "entityId": id = try reader.readString().lowercased()
                        case "revision": revision = try reader.readInt64()
                        case "sequence": sequence = try reader.readInt64()
                        case "creator": creator = try reader.readString()
                        case "assignee": assignee = try reader.readNull() ? nil : try reader.readString()
                        case "fields": fields = try readEntityFields(&reader)
                        default: try reader.skipValue()
                        }
                    }
                    guard let id, UUID(text: id) != nil, let revision, let sequence, let creator, let fields else {
                        throw reader.error("An entity of the page needs entityId (a UUID), revision, sequence, creator and fields")
                    }
                    let raw = bytes[fields.range]
                    // Sealed here as `fs_seal(fields, 'entity', list, id)` would, from the page's own bytes.
                    let value = try cipher.map { Data(try $0.seal(raw, place: DeviceCipher.place(["entity", list, id]))).databaseValue }
                        ?? String(decoding: raw, as: UTF8.self).databaseValue
                    rows.append(StoredEntityRow(id: id, revision: revision, sequence: sequence, creator: creator, assignee: assignee, fields: value, label: fields.label))
                    if pending.contains(id) {
                        try dropSettledChanges(db, list: list, id: id, server: try RecordFields(jsonBytes: Array(raw)))
                    }
                }
                try upsertEntities(db, list: list, rows)
                stored += rows.count
            case "removed":
                try reader.beginArray()
                while try reader.nextElement() {
                    let id = try reader.readString().lowercased()
                    try remove.execute(arguments: [list, id])
                    removed += db.changesCount
                    if pending.remove(id) != nil { try forget.execute(arguments: [list, id]) }
                }
            case "cursor": cursor = try reader.readInt64()
            case "hasMore": hasMore = try reader.readBool()
            default: try reader.skipValue()
            }
        }
        try reader.finish()
        guard let cursor else { throw reader.error("The page has no cursor") }
        try db.cachedStatement(sql: """
            INSERT INTO entity_cursors (list, cursor) VALUES (?, ?) ON CONFLICT (list) DO UPDATE SET cursor = excluded.cursor
            """).execute(arguments: [list, cursor])
        return EntityPageApplication(stored: stored, removed: removed, cursor: cursor, hasMore: hasMore)
    }

    /// Drops the local changes of the entity `id` the server's `server` fields now carry (a stamp at least as
    /// new for the property); the creation mark goes as soon as the server sends the entity.
    static func dropSettledChanges(_ db: Database, list: String, id: String, server: RecordFields) throws {
        let changes = try localChanges(db, list: list, id: id)[id] ?? []
        let drop = try db.cachedStatement(sql: "DELETE FROM entity_local_changes WHERE list = ? AND entity_id = ? AND property = ?")
        for change in changes where change.property.isEmpty || !isNewer(change.hlc, change.writer, than: server[change.property]) {
            try drop.execute(arguments: [list, id, change.property])
        }
    }
}

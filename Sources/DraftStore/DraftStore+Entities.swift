import Foundation
import FormModel
import GRDB
internal import SyncCore

/// What a form reads of an entity list on this device (docs/entity-lists.md, "On the device"): each list's
/// entities as the server last sent them, with the changes this device's submitted records made on top where
/// their stamp is newer.
extension DraftStore: EntityLookup {
    /// The entity `id` of `list` as a form reads it now; nil when the device holds no such entity (or the
    /// database cannot be read).
    public func entity(_ id: String, in list: String) -> EntityRow? {
        try? pool.read { db in try Self.entityRow(db, list: list, id: id) }
    }

    /// Visits the entities of `list` whose label contains `text` (ignoring case) in label order, as a form
    /// reads them, while `visit` returns true; the others are skipped by their label alone.
    public func forEachEntity(in list: String, labelContaining text: String, _ visit: (EntityRow) -> Bool) {
        try? pool.read { db in try Self.forEachEntity(db, list: list, labelContaining: text, visit) }
    }
}

/// The entity lists as the transaction `db` sees them: what a record's entity declaration reads while it is
/// submitted. Only used inside that transaction.
struct TransactionEntityLookup: EntityLookup, @unchecked Sendable {
    let db: Database

    func entity(_ id: String, in list: String) -> EntityRow? {
        try? DraftStore.entityRow(db, list: list, id: id)
    }

    func forEachEntity(in list: String, labelContaining text: String, _ visit: (EntityRow) -> Bool) {
        try? DraftStore.forEachEntity(db, list: list, labelContaining: text, visit)
    }
}

/// One entity of a list as it stands on this device, with what an integrator's screen shows of it.
public struct DeviceEntity: Sendable, Hashable, Identifiable {
    /// The entity's id.
    public var id: UUID
    /// Its list.
    public var list: String
    /// Its label, its properties, as a form reads them (server state with this device's newer changes on top).
    public var row: EntityRow
    /// The revision the server last sent; 0 for an entity created here that the server has not sent back yet.
    public var revision: Int64
    /// Whether changes this device's records made to it are not yet back from the server.
    public var hasLocalChanges: Bool
}

/// The outcome of applying one entity feed page.
package struct EntityPageApplication: Sendable, Hashable {
    /// Entities stored or updated.
    package var stored: Int
    /// Entities removed (out of scope or deleted).
    package var removed: Int
    /// Where the next page starts.
    package var cursor: Int64
    /// Whether the feed has more right away.
    package var hasMore: Bool
}

extension DraftStore {
    // MARK: - Reading

    /// A local change's stamp against the server's, as `FieldMerge` orders them (clock, then writer).
    static func isNewer(_ hlc: Int64, _ writer: String, than state: FieldState?) -> Bool {
        guard let state else { return true }
        return (HybridTimestamp(rawValue: hlc), writer) > (state.hlc, state.clientID)
    }

    struct LocalEntityChange {
        var property: String
        var value: String?
        var hlc: Int64
        var writer: String
    }

    static func localChanges(_ db: Database, list: String, id: String?) throws -> [String: [LocalEntityChange]] {
        var changes: [String: [LocalEntityChange]] = [:]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT entity_id, property, fs_open(value, 'entity-change', list, entity_id, property), hlc, writer FROM entity_local_changes WHERE list = ?1 AND (?2 IS NULL OR entity_id = ?2)
            """), arguments: [list, id])
        while let row = try rows.next() {
            changes[row[0], default: []].append(LocalEntityChange(property: row[1], value: row[2], hlc: row[3], writer: row[4]))
        }
        return changes
    }

    /// The entity as a form reads it: the server's fields (`fields`, nil when the server has not sent it)
    /// with `local` on top where newer.
    static func mergedEntity(id: String, fields: String?, local: [LocalEntityChange]) throws -> EntityRow {
        let server = try fields.map { try RecordFields(jsonBytes: Array($0.utf8)) } ?? RecordFields()
        var values = server.values
        for change in local where !change.property.isEmpty && isNewer(change.hlc, change.writer, than: server[change.property]) {
            values[change.property] = try change.value.flatMap(answerValue(json:))
        }
        let label = values.removeValue(forKey: StoredEntityKeys.label)
        var row = EntityRow(id: id, label: id, properties: values)
        if case .text(let text)? = label, !text.isEmpty { row.label = text }
        return row
    }

    /// An answer from its stored JSON (nil for JSON null).
    static func answerValue(json: String) throws -> AnswerValue? {
        var reader = JSONReader(Array(json.utf8))
        let value = try AnswerValue.readOptional(from: &reader)
        try reader.finish()
        return value
    }

    /// What an expression gives as text (nil for nothing or empty text).
    static func text(_ value: ExpressionValue?) -> String? {
        guard case .text(let text)? = value?.answer(for: .text), !text.isEmpty else { return nil }
        return text
    }

    static func entityRow(_ db: Database, list: String, id: String) throws -> EntityRow? {
        let key = id.lowercased()
        let fields = try String.fetchOne(db.cachedStatement(sql: "SELECT fs_open(fields, 'entity', list, id) FROM entities WHERE list = ? AND id = ?"), arguments: [list, key])
        let local = try localChanges(db, list: list, id: key)[key] ?? []
        guard fields != nil || !local.isEmpty else { return nil }
        return try mergedEntity(id: key, fields: fields, local: local)
    }

    /// How many entities a search may find in the label index (`entity_label_search`) and still read them
    /// alone; a search that finds more walks the list's labels in order, which soon finds its first matches.
    static let entitySearchCandidates = 256

    /// The list's entities in label order (the server's label; one created here and not yet sent back by its
    /// own label), while `visit` returns true.
    ///
    /// A search for ASCII text of three characters or more first asks the label index (trigrams of every
    /// label) for the entities whose label may contain it: when those are few (a rare search), only they are
    /// read, so a search with one match costs what a search with eight does; when they are many, the labels are
    /// walked in order and the walk stops at the first matches. Entities relabelled here, and those without a
    /// label (searched by their id), are read either way.
    static func forEachEntity(_ db: Database, list: String, labelContaining text: String = "", _ visit: (EntityRow) -> Bool) throws {
        var local = try localChanges(db, list: list, id: nil)
        // SQLite's LIKE ignores the case of ASCII letters only: it narrows by ASCII text, Swift checks every label.
        let ascii = text.unicodeScalars.allSatisfy(\.isASCII) && !text.isEmpty
        let like = ascii
            ? "%" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
            : nil
        // Entities only this device holds so far (created here), merged into the order by label.
        var onlyHere: [EntityRow] = []
        if !local.isEmpty {
            let known = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM entities WHERE list = ? AND id = ?)")
            for (id, changes) in local where try Bool.fetchOne(known, arguments: [list, id]) == false {
                let entity = try mergedEntity(id: id, fields: nil, local: changes)
                if entity.labelContains(text) { onlyHere.append(entity) }
            }
            onlyHere.sort { ($0.label, $0.id) > ($1.label, $1.id) }  // popped from the end
        }
        let statement: Statement
        var arguments: StatementArguments = [list, like]
        // The index's LIKE takes no escape character: text holding one of `%_\` walks.
        if ascii, text.utf8.count >= 3, !text.contains(where: { "%_\\".contains($0) }),
           case let candidates = try Int64.fetchAll(
               db.cachedStatement(sql: "SELECT rowid FROM entity_label_search WHERE label LIKE ? LIMIT \(entitySearchCandidates + 1)"),
               arguments: ["%" + text + "%"]),
           candidates.count <= entitySearchCandidates {
            statement = try db.cachedStatement(sql: """
                SELECT id, fs_open(fields, 'entity', list, id), coalesce(label, id) FROM entities WHERE +list = ?1
                    AND rowid IN (SELECT value FROM json_each(?2)
                        UNION SELECT e.rowid FROM entity_local_changes c JOIN entities e ON e.list = c.list AND e.id = c.entity_id
                            WHERE c.list = ?1 AND c.property = 'label'
                        UNION SELECT rowid FROM entities WHERE list = ?1 AND label IS NULL)
                ORDER BY label, id
                """)
            arguments = [list, "[" + candidates.map(String.init).joined(separator: ",") + "]"]
        } else {
            statement = try db.cachedStatement(sql: """
                SELECT id, fs_open(fields, 'entity', list, id), coalesce(label, id) FROM entities WHERE list = ?1
                    AND (?2 IS NULL OR coalesce(label, id) LIKE ?2 ESCAPE '\\'
                        OR id IN (SELECT entity_id FROM entity_local_changes WHERE list = ?1 AND property = 'label'))
                ORDER BY label, id
                """)
        }
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try rows.next() {
            let id: String = row[0]
            let label: String = row[2]
            while let next = onlyHere.last, (next.label, next.id) < (label, id) {
                onlyHere.removeLast()
                guard visit(next) else { return }
            }
            let changes = local.removeValue(forKey: id) ?? []
            // Skipped by the label the server sent (its fields not read), unless a change here may relabel it.
            if changes.isEmpty, !EntityRow(id: id, label: label).labelContains(text) { continue }
            let entity = try mergedEntity(id: id, fields: row[1], local: changes)
            guard entity.labelContains(text) else { continue }
            guard visit(entity) else { return }
        }
        while let next = onlyHere.popLast() {
            guard visit(next) else { return }
        }
    }

    /// The entity lists' entities on this device, `list`'s only when given, in list and label order.
    static func fetchEntities(_ db: Database, list: String?) throws -> [DeviceEntity] {
        let lists = try list.map { [$0] } ?? String.fetchAll(db, sql: """
            SELECT list FROM entities UNION SELECT list FROM entity_local_changes ORDER BY list
            """)
        var found: [DeviceEntity] = []
        for list in lists {
            let revisions = try Dictionary(
                Row.fetchAll(db, sql: "SELECT id, revision FROM entities WHERE list = ?", arguments: [list]).map { ($0[0] as String, $0[1] as Int64) },
                uniquingKeysWith: { first, _ in first })
            let changed = Set(try String.fetchAll(db, sql: "SELECT DISTINCT entity_id FROM entity_local_changes WHERE list = ?", arguments: [list]))
            try forEachEntity(db, list: list) { row in
                if let id = UUID(uuidString: row.id) {
                    found.append(DeviceEntity(id: id, list: list, row: row, revision: revisions[row.id] ?? 0, hasLocalChanges: changed.contains(row.id)))
                }
                return true
            }
        }
        return found
    }

    /// The entities of `list` (every list's when nil) as they stand on this device, now and after every
    /// change: a sync that brings or removes entities, a record submitted here that creates or updates one.
    /// The same observation as ``observeRecords(_:)``: the current value first, then a value after each commit
    /// that changes it, in this process or another on this home.
    ///
    /// ```swift
    /// for try await households in store.observeEntities(list: "households") {
    ///     print(households.map(\.row.label))
    /// }
    /// ```
    public func observeEntities(list: String? = nil) -> StoreObservation<[DeviceEntity]> {
        observe(doing: "listing entities", tables: ["entities", "entity_local_changes"]) { db in
            try Self.fetchEntities(db, list: list)
        }
    }

    // MARK: - Sync

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
                    guard let id, UUID(uuidString: id) != nil, let revision, let sequence, let creator, let fields else {
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

    // MARK: - Submitting

    /// Evaluates the form's entity declaration on a record being submitted (in the submitting transaction),
    /// stores the outcome in the record's `__entity` field as an unsent edit stamped `clock`, and applies the
    /// change to the entity on this device. A record that holds an entity change already (an edit after
    /// submission) keeps it and applies its `saveTo` fields again. Nothing happens when the form declares no
    /// entity, or when neither its create nor its update condition holds.
    static func applyEntityDeclaration(
        _ db: Database, form: FormDefinition, logic: FormLogic, record: StoredRecord, metadata: RecordMetadata, clock: HybridTimestamp,
        device: String, presentation: String?
    ) throws {
        guard let declaration = form.entity else { return }
        let recordKey = record.id.uuidString.lowercased()
        let answers = record.answers
        var change: RecordEntityChange
        if let existing = answers[RecordEntityChange.fieldID], let stored = try? RecordEntityChange(answer: existing) {
            change = stored
        } else {
            let state = FormState(logic: logic, answers: answers, metadata: metadata, entities: TransactionEntityLookup(db: db))
            func value(_ source: String?) -> ExpressionValue? {
                guard let source, let expression = try? FormExpression.parse(source) else { return nil }
                return state.evaluate(expression, at: "")
            }
            func holds(_ source: String?) -> Bool { source == nil || (value(source)?.isTruthy ?? false) }
            let label = text(value(declaration.label))
            let named = text(value(declaration.entityId)).flatMap(UUID.init(uuidString:))
            if declaration.updates, let named, declaration.updateIf == nil || holds(declaration.updateIf),
               try entityRow(db, list: declaration.list, id: named.uuidString) != nil {
                let revision = try Int64.fetchOne(db, sql: "SELECT revision FROM entities WHERE list = ? AND id = ?", arguments: [declaration.list, named.uuidString.lowercased()]) ?? 0
                change = RecordEntityChange(list: declaration.list, entityId: named, action: .update, baseRevision: revision, label: label)
            } else if declaration.creates, declaration.entityId == nil ? holds(declaration.createIf) : (declaration.createIf != nil && holds(declaration.createIf)) {
                change = RecordEntityChange(list: declaration.list, entityId: record.id, action: .create, baseRevision: 0, label: label)
            } else {
                return
            }
            let json = answerJSON(change.answer)
            try setEdit(db, record: recordKey, key: RecordEntityChange.fieldID, json: json)
            let base = try editBase(db, record: recordKey, field: RecordEntityChange.fieldID, serverRevision: record.serverRevision)
            try db.execute(sql: """
                INSERT INTO outbox (record_id, presentation_id, kind, field_id, value, base_revision, hlc, created_at)
                VALUES (?1, ?2, 'set', ?3, fs_seal(?4, 'outbox', ?1, ?3), ?5, ?6, ?7)
                """, arguments: [recordKey, presentation, RecordEntityChange.fieldID, json, base, clock.rawValue, nowMillis()])
            let entityKey = change.entityId.uuidString.lowercased()
            if change.action == .create {
                try storeLocalChange(db, list: change.list, entity: entityKey, property: "", record: recordKey, value: nil, hlc: clock, writer: device)
            }
            if let label = change.label {
                try storeLocalChange(db, list: change.list, entity: entityKey, property: StoredEntityKeys.label, record: recordKey, value: answerJSON(.text(label)), hlc: clock, writer: device)
            }
        }
        // Each saveTo field with the stamp the server will give it: the newest clock of the record's unsent rows
        // that touch it (what the push sends), else the synced field's own.
        let entityKey = change.entityId.uuidString.lowercased()
        for field in form.allFields {
            guard let property = field.saveTo else { continue }
            let pendingClock = try Int64.fetchOne(db.cachedStatement(sql: """
                SELECT max(hlc) FROM outbox WHERE record_id = ?1 AND (field_id = ?2 OR (field_id IS NULL AND kind = 'create' AND json_type(fs_open(value, 'outbox', record_id, ''), ?3) IS NOT NULL))
                """), arguments: [recordKey, field.id, "$.\"\(field.id)\""])
            let stamp: (HybridTimestamp, String)
            if let pendingClock {
                stamp = (HybridTimestamp(rawValue: pendingClock), device)
            } else if let synced = record.synced[field.id] {
                stamp = (synced.hlc, synced.clientID)
            } else {
                continue
            }
            try storeLocalChange(
                db, list: change.list, entity: entityKey, property: property, record: recordKey, value: answers[field.id].map(answerJSON), hlc: stamp.0, writer: stamp.1)
        }
    }

    /// Keeps one property's local change, unless one with a newer stamp is kept already.
    static func storeLocalChange(
        _ db: Database, list: String, entity: String, property: String, record: String, value: String?, hlc: HybridTimestamp, writer: String
    ) throws {
        try db.cachedStatement(sql: """
            INSERT INTO entity_local_changes (list, entity_id, property, record_id, value, hlc, writer) VALUES (?1, ?2, ?3, ?4, fs_seal(?5, 'entity-change', ?1, ?2, ?3), ?6, ?7)
            ON CONFLICT (list, entity_id, property) DO UPDATE SET record_id = excluded.record_id, value = excluded.value, hlc = excluded.hlc,
                writer = excluded.writer
            WHERE (excluded.hlc, excluded.writer) >= (entity_local_changes.hlc, entity_local_changes.writer)
            """).execute(arguments: [list, entity, property, record, value, hlc.rawValue, writer])
    }
}

/// The key of an entity's label among its fields (as the server stores it).
enum StoredEntityKeys {
    static let label = "label"
}

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
                if let id = UUID(text: row.id) {
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
}

/// The key of an entity's label among its fields (as the server stores it).
enum StoredEntityKeys {
    static let label = "label"
}

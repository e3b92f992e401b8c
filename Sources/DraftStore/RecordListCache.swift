import Foundation
import GRDB

/// A records list kept between commits, so that after a commit only the records it touched are read
/// again (the records-list observation): a few rows instead of the whole list.
///
/// Used by one observation task at a time, inside that task's reads.
final class RecordListCache: @unchecked Sendable {
    let query: RecordListQuery
    private let needle: [UInt8]
    private let search: SearchTextCache?
    /// The rows `query`'s states and form select, in the list's order (kept in order as rows change: a
    /// commit moves a few rows, it does not sort ten thousand again).
    private var ordered: [RecordListRow] = []
    /// Where each of those rows sorts, by rowid, to find it in `ordered`.
    private var placed: [Int64: (updatedAt: Int64, key: String)] = [:]
    /// Rowids of those rows by record id.
    private var rowIDs: [String: Int64] = [:]

    init(query: RecordListQuery) {
        self.query = query
        needle = Array(query.text.lowercased().utf8)
        search = needle.isEmpty ? nil : SearchTextCache()
    }

    /// Reads every row again.
    func reload(_ db: Database) throws {
        ordered = []
        placed = [:]
        rowIDs = [:]
        guard !query.states.isEmpty else { return }
        let condition = query.recordCondition
        try DraftStore.readRecordListRows(
            db, titles: DraftStore.formTitles(db),
            "INDEXED BY records_by_state WHERE \(condition.sql) ORDER BY r.updated_at DESC, r.id DESC", arguments: condition.arguments
        ) { row in
            ordered.append(row)
            placed[row.rowID] = (row.updatedAt, row.key)
            rowIDs[row.key] = row.rowID
        }
    }

    /// Brings the rows up to date with `change`, reading only the records it names.
    func apply(_ change: RecordListChange, _ db: Database) throws {
        if change.everything {
            return try reload(db)
        }
        var touched = change.recordRows
        for key in try recordIDs(db, table: "outbox", idColumn: "mutation_id", change.outboxRows)
            .union(recordIDs(db, table: "conflicts", idColumn: "id", change.conflictRows)) {
            // A record this list does not hold yet changed its `records` row too, or is not selected.
            if let rowID = rowIDs[key] { touched.insert(rowID) }
        }
        if !touched.isEmpty {
            try reread(db, touched)
        }
        if change.outboxDeleted {
            let counts = try counts(db, sql: "SELECT record_id, count(*) FROM outbox GROUP BY record_id")
            for index in ordered.indices { ordered[index].summary.waitingChanges = counts[ordered[index].key] ?? 0 }
        }
        if change.conflictsDeleted {
            let counts = try counts(db, sql: "SELECT record_id, count(*) FROM conflicts WHERE resolved_at IS NULL GROUP BY record_id")
            for index in ordered.indices { ordered[index].summary.openConflicts = counts[ordered[index].key] ?? 0 }
        }
    }

    /// The list: the rows that pass the mark and text filters, in the list's order.
    func list(_ db: Database) throws -> [RecordListSummary] {
        var selected: [RecordListSummary] = []
        selected.reserveCapacity(ordered.count)
        for row in ordered where try query.admits(row, needle: needle, search: search, db) {
            selected.append(row.summary)
        }
        return selected
    }

    /// Reads the rows with `rowIDs` again: a row that is gone, or no longer selected, leaves the list.
    private func reread(_ db: Database, _ touched: Set<Int64>) throws {
        let ids = Array(touched)
        for rowID in ids { remove(rowID) }
        let condition = query.recordCondition
        let titles = try DraftStore.formTitles(db)
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = ids[start..<min(start + 500, ids.count)]
            var arguments = StatementArguments(Array(chunk))
            arguments += condition.arguments
            try DraftStore.readRecordListRows(
                db, titles: titles,
                "WHERE r.rowid IN (\(chunk.map { _ in "?" }.joined(separator: ", "))) AND \(condition.sql)", arguments: arguments
            ) { row in
                if let previous = rowIDs[row.key] { remove(previous) }
                insert(row)
            }
        }
    }

    /// The index in `ordered` where a row sorting at (`updatedAt`, `key`) is or would go: the list's order is
    /// most recently changed first, then by id descending, as the full read's ORDER BY.
    private func index(updatedAt: Int64, key: String) -> Int {
        var low = 0
        var high = ordered.count
        while low < high {
            let middle = (low + high) / 2
            let row = ordered[middle]
            if row.updatedAt > updatedAt || (row.updatedAt == updatedAt && row.key > key) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    private func remove(_ rowID: Int64) {
        guard let place = placed.removeValue(forKey: rowID) else { return }
        rowIDs[place.key] = nil
        let at = index(updatedAt: place.updatedAt, key: place.key)
        if ordered.indices.contains(at), ordered[at].rowID == rowID {
            ordered.remove(at: at)
        } else if let found = ordered.firstIndex(where: { $0.rowID == rowID }) {
            ordered.remove(at: found)
        }
    }

    private func insert(_ row: RecordListRow) {
        ordered.insert(row, at: index(updatedAt: row.updatedAt, key: row.key))
        placed[row.rowID] = (row.updatedAt, row.key)
        rowIDs[row.key] = row.rowID
    }

    /// The record ids of the rows of `table` with `ids` (those still there).
    private func recordIDs(_ db: Database, table: String, idColumn: String, _ ids: Set<Int64>) throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        var keys = Set<String>()
        let all = Array(ids)
        for start in stride(from: 0, to: all.count, by: 500) {
            let chunk = Array(all[start..<min(start + 500, all.count)])
            let sql = "SELECT DISTINCT record_id FROM \(table) WHERE \(idColumn) IN (\(chunk.map { _ in "?" }.joined(separator: ", ")))"
            keys.formUnion(try String.fetchAll(db, sql: sql, arguments: StatementArguments(chunk)))
        }
        return keys
    }

    private func counts(_ db: Database, sql: String) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: sql) { counts[row[0]] = row[1] }
        return counts
    }
}

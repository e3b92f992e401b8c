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
    /// The rows `query`'s states and form select, by rowid.
    private var rows: [Int64: RecordListRow] = [:]
    /// Rowids of those rows by record id.
    private var rowIDs: [String: Int64] = [:]

    init(query: RecordListQuery) {
        self.query = query
        needle = Array(query.text.lowercased().utf8)
        search = needle.isEmpty ? nil : SearchTextCache()
    }

    /// Reads every row again.
    func reload(_ db: Database) throws {
        rows = [:]
        rowIDs = [:]
        guard !query.states.isEmpty else { return }
        let condition = query.recordCondition
        try DraftStore.readRecordListRows(
            db, titles: DraftStore.formTitles(db), "INDEXED BY records_by_state WHERE \(condition.sql)", arguments: condition.arguments
        ) { row in
            rows[row.rowID] = row
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
            for (rowID, row) in rows { rows[rowID]?.summary.waitingChanges = counts[row.key] ?? 0 }
        }
        if change.conflictsDeleted {
            let counts = try counts(db, sql: "SELECT record_id, count(*) FROM conflicts WHERE resolved_at IS NULL GROUP BY record_id")
            for (rowID, row) in rows { rows[rowID]?.summary.openConflicts = counts[row.key] ?? 0 }
        }
    }

    /// The list: the rows that pass the mark and text filters, in the list's order.
    func list(_ db: Database) throws -> [RecordListSummary] {
        var selected: [RecordListRow] = []
        selected.reserveCapacity(rows.count)
        for row in rows.values where try query.admits(row, needle: needle, search: search, db) {
            selected.append(row)
        }
        selected.sort(by: RecordListRow.precedes)
        return selected.map(\.summary)
    }

    /// Reads the rows with `rowIDs` again: a row that is gone, or no longer selected, leaves the list.
    private func reread(_ db: Database, _ touched: Set<Int64>) throws {
        let ids = Array(touched)
        for rowID in ids {
            if let row = rows.removeValue(forKey: rowID) { rowIDs[row.key] = nil }
        }
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
                if let previous = rowIDs[row.key], previous != row.rowID { rows[previous] = nil }
                rows[row.rowID] = row
                rowIDs[row.key] = row.rowID
            }
        }
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

import Foundation
import FormModel
import GRDB

/// Which records a list shows: by form, by state, by sync mark and by text.
public struct RecordListQuery: Sendable, Hashable {
    /// Only records of this form (any version); nil for every form.
    public var formID: String?
    /// Only records in these states (drafts and submitted records by default; `deleted` lists tombstones).
    public var states: Set<RecordState>
    /// Only records with these sync marks; nil for any.
    public var marks: Set<RecordListSummary.SyncMark>?
    /// Only records whose form title or any answer, as shown, contains this text (any case); empty for all.
    /// Without text the list reads the records' columns only; with text it also reads the values of
    /// records that changed since the last read.
    public var text: String

    /// A query; by default every draft and submitted record of every form, any sync mark, no text filter.
    public init(formID: String? = nil, states: Set<RecordState> = [.draft, .submitted], marks: Set<RecordListSummary.SyncMark>? = nil, text: String = "") {
        self.formID = formID
        self.states = states
        self.marks = marks
        self.text = text
    }
}

extension RecordListSummary {
    /// The per-record mark a list shows (the terminal app's ✎ ↑ ✓ !).
    public enum SyncMark: String, Sendable, Hashable, CaseIterable {
        /// A draft, kept on the device (its changes sync too, as a draft).
        case draft
        /// Submitted, with changes the server has not acknowledged yet.
        case waiting
        /// Submitted, and the server has everything.
        case synced
        /// A conflict waits for a person (see ``DraftStore/resolveConflict(record:field:choice:)``).
        case conflict
    }

    /// This record's mark: a conflict first, then a draft, then whether changes wait to be sent.
    public var syncMark: SyncMark {
        if openConflicts > 0 { return .conflict }
        if state == .draft { return .draft }
        return waitingChanges > 0 ? .waiting : .synced
    }
}

/// What a text search looks through: a record's form title and every answer as shown, lowercased.
public enum RecordSearch {
    /// The searchable text of `record`: `formTitle`, then each answered field of `form` (its own fields, not
    /// those inside repeat instances) as displayed; a record read with ``RecordAnswers/topLevel`` gives the same.
    public static func text(of record: StoredRecord, formTitle: String, form: FormDefinition?) -> [UInt8] {
        var text = formTitle
        if let form {
            // `answers` is built from the record's fields on each read: once, not once per field.
            let answers = record.answers
            for field in form.allFields {
                guard let value = answers[field.id] else { continue }
                text += "\n" + value.display(for: field)
            }
        }
        return Array(text.lowercased().utf8)
    }

    /// Whether `haystack` holds `needle` (bytes; an empty needle is in everything).
    public static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        return haystack.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { pin in
                guard let hayBase = hay.baseAddress, let pinBase = pin.baseAddress else { return false }
                let first = pin[0]
                var index = 0
                while index <= hay.count - pin.count {
                    if hay[index] == first, memcmp(hayBase + index, pinBase, pin.count) == 0 { return true }
                    index += 1
                }
                return false
            }
        }
    }
}

/// The searchable text of records already read, by id and as of which change, so a text-filtered list
/// that is read again decodes only the records that changed.
final class SearchTextCache: @unchecked Sendable {
    struct Entry {
        var updatedAt: Int64
        var revision: Int64
        var text: [UInt8]
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var forms: [FormKey: FormDefinition?] = [:]

    func text(_ db: Database, id: String, updatedAt: Int64, revision: Int64, formTitle: String) throws -> [UInt8] {
        if let entry = lock.withLock({ entries[id] }), entry.updatedAt == updatedAt, entry.revision == revision { return entry.text }
        // The text is made of the form's own fields (RecordSearch): a record's repeat instances are not read.
        guard let uuid = UUID(text: id), let record = try DraftStore.fetchRecord(db, id: uuid, answers: .topLevel) else { return [] }
        let key = record.form
        let form = try lock.withLock({ forms[key] }) ?? {
            let json = try String.fetchOne(db, sql: "SELECT definition FROM forms WHERE id = ? AND version = ?", arguments: [key.id, key.version])
            let decoded = json.flatMap { try? JSONDecoder().decode(FormDefinition.self, from: Data($0.utf8)) }
            lock.withLock { forms[key] = .some(decoded) }
            return decoded
        }()
        let text = RecordSearch.text(of: record, formTitle: formTitle, form: form)
        lock.withLock { entries[id] = Entry(updatedAt: updatedAt, revision: revision, text: text) }
        return text
    }
}

/// One row of the records list as read, with what keeps a list of them current and in order.
struct RecordListRow {
    var rowID: Int64
    /// The record's id as stored (lowercased).
    var key: String
    /// `updated_at` as stored, for ordering.
    var updatedAt: Int64
    var revision: Int64
    var summary: RecordListSummary
}

extension RecordListQuery {
    /// The SQL condition on `records r` for the states and form this query selects, with its arguments.
    var recordCondition: (sql: String, arguments: StatementArguments) {
        let states = states.map(\.rawValue).sorted()
        var arguments = StatementArguments(states)
        var sql = "r.state IN (\(states.map { _ in "?" }.joined(separator: ", ")))"
        if let formID {
            sql += " AND r.form_id = ?"
            arguments += [formID]
        }
        return (sql, arguments)
    }

    /// Whether a row the condition above selects also passes the mark and text filters.
    func admits(_ row: RecordListRow, needle: [UInt8], search: SearchTextCache?, _ db: Database) throws -> Bool {
        if let marks, !marks.contains(row.summary.syncMark) { return false }
        if let search, !needle.isEmpty {
            let text = try search.text(db, id: row.key, updatedAt: row.updatedAt, revision: row.revision, formTitle: row.summary.formTitle)
            return RecordSearch.contains(text, needle)
        }
        return true
    }
}

extension DraftStore {
    /// Every form's title, by id and version.
    static func formTitles(_ db: Database) throws -> [FormKey: String] {
        var titles: [FormKey: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, version, title FROM forms") {
            titles[FormKey(id: row[0], version: row[1])] = row[2]
        }
        return titles
    }

    /// Calls `body` with each row of `records r` that `condition` selects (after `FROM records r`:
    /// an optional `INDEXED BY` and the WHERE clause), with its outbox and open-conflict counts.
    static func readRecordListRows(_ db: Database, titles: [FormKey: String], _ condition: String, arguments: StatementArguments, _ body: (RecordListRow) throws -> Void) throws {
        let rows = try Row.fetchCursor(db, sql: """
            SELECT r.rowid, r.id, r.form_id, r.form_version, r.state, r.updated_at,
                (SELECT count(*) FROM outbox o WHERE o.record_id = r.id),
                (SELECT count(*) FROM conflicts c WHERE c.record_id = r.id AND c.resolved_at IS NULL),
                r.server_revision,
                (SELECT v.state FROM record_reviews v WHERE v.record_id = r.id),
                (SELECT v.comment FROM record_reviews v WHERE v.record_id = r.id)
            FROM records r \(condition)
            """, arguments: arguments)
        while let row = try rows.next() {
            let key: String = row[1]
            guard let id = UUID(text: key), let state = RecordState(rawValue: row[4]) else { continue }
            let form = FormKey(id: row[2], version: row[3])
            let updatedAt: Int64 = row[5]
            try body(RecordListRow(
                rowID: row[0], key: key, updatedAt: updatedAt, revision: row[8],
                summary: RecordListSummary(
                    id: id, form: form, formTitle: titles[form] ?? form.id, state: state,
                    updatedAt: date(updatedAt), waitingChanges: row[6], openConflicts: row[7],
                    review: review(state: row[9], comment: row[10]))))
        }
    }

    /// The records `query` selects, most recently changed first, from the records' columns and two
    /// indexes (and, for a text filter, the values of records not read since they changed).
    static func fetchRecordList(_ db: Database, _ query: RecordListQuery) throws -> [RecordListSummary] {
        guard !query.states.isEmpty else { return [] }
        let needle = Array(query.text.lowercased().utf8)
        let search = needle.isEmpty ? nil : SearchTextCache()
        let condition = query.recordCondition
        var summaries: [RecordListSummary] = []
        try readRecordListRows(
            db, titles: formTitles(db), "INDEXED BY records_by_state WHERE \(condition.sql) ORDER BY r.updated_at DESC, r.id DESC",
            arguments: condition.arguments
        ) { row in
            if try query.admits(row, needle: needle, search: search, db) { summaries.append(row.summary) }
        }
        return summaries
    }
}

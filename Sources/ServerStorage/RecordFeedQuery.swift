import Foundation
import SyncCore

/// A page of one form's records for a feed that another tool reads (the OData feed, the GeoJSON export):
/// filtered by conditions on the record's envelope, ordered by record id and continued after the last id of
/// the previous page (a keyset cursor: a page deep in 100,000 records costs what the first one does). Deleted
/// records are left out.
public struct RecordFeedQuery: Sendable, Hashable {
    /// The form whose records are read.
    public var formID: String
    /// Every condition holds (`and`).
    public var conditions: [RecordCondition]
    /// Where the previous page ended: its last record's id.
    public var after: UUID?
    /// Records skipped before the page starts (the client's `$skip`; only the first page of a feed has one).
    public var offset: Int
    /// The most records the page holds.
    public var limit: Int

    /// A page of `formId`'s records passing every condition, after `after`, skipping `offset`, of at most `limit`.
    public init(formID: String, conditions: [RecordCondition] = [], after: UUID? = nil, offset: Int = 0, limit: Int = 1000) {
        self.formID = formID
        self.conditions = conditions
        self.after = after
        self.offset = offset
        self.limit = limit
    }

    /// The statement's `WHERE` conditions after form, state and visibility, with their arguments in order, as
    /// both backends write them; `placeholder` gives the text of the next parameter (`?`, or `$5`).
    public func whereSQL(placeholder: () -> String) -> (sql: String, arguments: [RecordCondition.Argument]) {
        var sql = ""
        var arguments: [RecordCondition.Argument] = []
        for condition in conditions {
            let (text, values) = condition.sql(placeholder: placeholder)
            sql += " AND " + text
            arguments += values
        }
        return (sql, arguments)
    }
}

/// One comparison of a record's envelope with a value: `submittedAt ge 2026-01-01T00:00:00Z`, `reviewState eq
/// 'approved'`, `author ne 'ana'`. Comparisons follow OData's rules for null: `ne` holds for a record without
/// the value; `eq null` and `ne null` ask whether it has one.
public struct RecordCondition: Sendable, Hashable {
    /// What a condition may read: the record's times (as stored, on the clock where they happened) and its review state and author.
    public enum Property: String, Sendable, Hashable, CaseIterable {
        /// When the record was last submitted (`submitted_at`).
        case submittedAt
        /// When the record last changed (`updated_at`).
        case updatedAt
        /// When the server stored its latest change (`received_at`).
        case receivedAt
        /// `received`, `hasIssues`, `approved`, `rejected`, `edited`; null before the first submission.
        case reviewState
        /// The user name of the record's author.
        case author

        /// Whether values are times (compared by order) rather than names (compared for equality only).
        public var isTime: Bool { self == .submittedAt || self == .updatedAt || self == .receivedAt }
    }

    /// OData's comparison operators: equal, not equal, greater than, greater or equal, less than, less or equal.
    public enum Comparison: String, Sendable, Hashable, CaseIterable {
        case eq, ne, gt, ge, lt, le

        var sql: String {
            switch self {
            case .eq: "="
            case .ne: "<>"
            case .gt: ">"
            case .ge: ">="
            case .lt: "<"
            case .le: "<="
            }
        }
    }

    /// The value compared with.
    public enum Value: Sendable, Hashable {
        case time(Date)
        case text(String)
        case null
    }

    /// A statement argument: seconds since 1970 or text.
    public enum Argument: Sendable, Hashable {
        case seconds(Double)
        case text(String)
    }

    /// What is compared.
    public var property: Property
    /// How it is compared.
    public var comparison: Comparison
    /// What it is compared with.
    public var value: Value

    /// `property comparison value`, as a `$filter` reads it.
    public init(_ property: Property, _ comparison: Comparison, _ value: Value) {
        self.property = property
        self.comparison = comparison
        self.value = value
    }

    /// Whether `record` passes the condition, as the statement decides it: for what reads records one by one.
    public func matches(_ record: StoredRecord) -> Bool {
        let actual: Value
        switch property {
        case .submittedAt: actual = record.times.submitted.map(Value.time) ?? .null
        case .updatedAt: actual = record.times.updated.map(Value.time) ?? .null
        case .receivedAt: actual = record.receivedAt.map(Value.time) ?? .null
        case .reviewState: actual = record.review.map { .text($0.state.rawValue) } ?? .null
        case .author: actual = .text(record.authorName)
        }
        switch (actual, value, comparison) {
        case (.null, .null, .eq): return true
        case (.null, .null, .ne): return false
        case (_, .null, .eq): return false
        case (_, .null, .ne): return true
        case (.null, _, .ne): return true
        case (.null, _, _): return false
        case (.time(let left), .time(let right), _): return Self.compare(left.timeIntervalSince1970, right.timeIntervalSince1970, comparison)
        case (.text(let left), .text(let right), _): return Self.compare(left, right, comparison)
        default: return false
        }
    }

    static func compare<T: Comparable>(_ left: T, _ right: T, _ comparison: Comparison) -> Bool {
        switch comparison {
        case .eq: left == right
        case .ne: left != right
        case .gt: left > right
        case .ge: left >= right
        case .lt: left < right
        case .le: left <= right
        }
    }

    /// The condition as SQL over `records r`, with its arguments.
    func sql(placeholder: () -> String) -> (String, [Argument]) {
        let column: String
        switch property {
        case .submittedAt: column = "r.submitted_at"
        case .updatedAt: column = "r.updated_at"
        case .receivedAt: column = "r.received_at"
        case .reviewState: column = "r.review_state"
        case .author:
            // The author's name is the users row's; a record always has an author.
            switch value {
            case .null: return (comparison == .ne ? "1 = 1" : "1 = 0", [])
            case .text(let name):
                // A user name is unique, so the author is one id: `=` a scalar subquery, which both databases
                // seek in an index as a constant (`records_by_form_review_author` serves a page filtered by review
                // state and author in id order); no such user, a null, which equals nothing.
                let author = "(SELECT id FROM users WHERE name = \(placeholder()))"
                return (comparison == .ne ? "NOT (r.author_id IN \(author))" : "r.author_id = \(author)", [.text(name)])
            case .time: return ("1 = 0", [])
            }
        }
        let argument: Argument
        switch value {
        case .null: return (comparison == .ne ? "\(column) IS NOT NULL" : "\(column) IS NULL", [])
        case .time(let date): argument = .seconds(date.timeIntervalSince1970)
        case .text(let text): argument = .text(text)
        }
        let compared = "\(column) \(comparison.sql) \(placeholder())"
        return (comparison == .ne ? "(\(column) IS NULL OR \(compared))" : compared, [argument])
    }
}

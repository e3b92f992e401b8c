import GRDB

/// The rows a push inserts into one table, written a chunk at a time: one `INSERT … VALUES (…), (…), …` of
/// ``chunk`` rows through a cached statement, so what SQLite and GRDB do once per statement (opening a cursor
/// on the table and on each of its indexes, the statement journal, binding checks) is paid once per chunk
/// instead of once per row. The rows after the last whole chunk go through the one-row statement. Rows are
/// inserted in the order they were added, so the ids SQLite assigns follow it.
struct RowBatch {
    /// Rows in a whole chunk: a push of 500 records is ten statements per table. At most 17 columns × 50 rows =
    /// 850 parameters, far under SQLite's limit (32,766).
    static let chunk = 50

    /// The statement before its VALUES list (`INSERT INTO t (a, b)`) and after it (an upsert clause, or empty).
    let head: String
    let tail: String
    let columns: Int
    private var values: [DatabaseValue] = []

    init(_ head: String, columns: Int, tail: String = "", capacity rows: Int = 0) {
        self.head = head
        self.tail = tail
        self.columns = columns
        values.reserveCapacity(rows * columns)
    }

    /// Rows added so far (whole rows: ``add(_:)`` is called `columns` times per row).
    var count: Int { values.count / columns }

    /// The next value of the row being added, in the statement's column order.
    mutating func add(_ value: some DatabaseValueConvertible) {
        values.append(value.databaseValue)
    }

    mutating func add(_ value: (some DatabaseValueConvertible)?) {
        values.append(value?.databaseValue ?? .null)
    }

    /// The statement for `rows` rows.
    func sql(rows: Int) -> String {
        let row = "(" + repeatElement("?", count: columns).joined(separator: ", ") + ")"
        let list = repeatElement(row, count: rows).joined(separator: ", ")
        return tail.isEmpty ? "\(head) VALUES \(list)" : "\(head) VALUES \(list) \(tail)"
    }

    /// Inserts every row added, in order.
    func execute(_ db: Database) throws {
        let whole = count / Self.chunk
        var start = 0
        if whole > 0 {
            let statement = try db.cachedStatement(sql: sql(rows: Self.chunk))
            for _ in 0..<whole {
                let end = start + Self.chunk * columns
                try statement.execute(arguments: StatementArguments(values[start..<end]))
                start = end
            }
        }
        guard start < values.count else { return }
        let statement = try db.cachedStatement(sql: sql(rows: 1))
        while start < values.count {
            // A short last row (a caller's mistake) reaches GRDB, which refuses it: wrong number of arguments.
            let end = min(start + columns, values.count)
            try statement.execute(arguments: StatementArguments(values[start..<end]))
            start = end
        }
    }
}

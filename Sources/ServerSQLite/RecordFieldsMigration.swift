import Foundation
import FormModel
import GRDB
import SyncCore

/// Migration v2 of the server's data: record fields move from the first version's shape (every field an
/// object repeating its revision, clock and device: `{"f": {"value": …, "revision": 1, "hlc": …,
/// "clientId": "…"}}`) to ``RecordFields``. The schema itself does not change. (PostgreSQL converts in SQL:
/// migration 2 of `Schema/server-postgres.sql`.)
enum RecordFieldsMigration {
    /// The first version's stored field, read with Foundation's decoder once, during the migration.
    struct LegacyField: Decodable {
        var value: AnswerValue?
        var revision: Int64
        var hlc: Int64
        var clientID: String

        private enum CodingKeys: String, CodingKey {
            case value, revision, hlc, clientID = "clientId"
        }
    }

    static func convertSQLite(_ db: Database) throws {
        let decoder = JSONDecoder()
        let rows = try Row.fetchAll(db, sql: "SELECT rowid, fields FROM records")
        let update = try db.makeStatement(sql: "UPDATE records SET fields = ? WHERE rowid = ?")
        for row in rows {
            let text: String = row[1]
            let legacy = try decoder.decode([String: LegacyField].self, from: Data(text.utf8))
            let fields = RecordFields(legacy.mapValues {
                FieldState(value: $0.value, revision: $0.revision, hlc: HybridTimestamp(rawValue: $0.hlc), clientID: $0.clientID)
            })
            try update.execute(arguments: [String(decoding: fields.jsonBytes(), as: UTF8.self), row[0] as Int64])
        }
    }
}

import Foundation
import FormModel
import GRDB
import SyncCore

/// Migration v2 of the server's data: record fields move from the first version's shape (every field an
/// object repeating its revision, clock and device: `{"f": {"value": …, "revision": 1, "hlc": …,
/// "clientId": "…"}}`) to ``RecordFields``. The schema itself does not change.
enum RecordFieldsMigration {
    /// The first version's stored field, read with Foundation's decoder once, during the migration.
    struct LegacyField: Decodable {
        var value: AnswerValue?
        var revision: Int64
        var hlc: Int64
        var clientId: String
    }

    static func convertSQLite(_ db: Database) throws {
        let decoder = JSONDecoder()
        let rows = try Row.fetchAll(db, sql: "SELECT rowid, fields FROM records")
        let update = try db.makeStatement(sql: "UPDATE records SET fields = ? WHERE rowid = ?")
        for row in rows {
            let text: String = row[1]
            let legacy = try decoder.decode([String: LegacyField].self, from: Data(text.utf8))
            let fields = RecordFields(legacy.mapValues {
                FieldState(value: $0.value, revision: $0.revision, hlc: HybridTimestamp(rawValue: $0.hlc), clientId: $0.clientId)
            })
            try update.execute(arguments: [String(decoding: fields.jsonBytes(), as: UTF8.self), row[0] as Int64])
        }
    }

    /// The same conversion in PostgreSQL's JSON functions (record ids there are UUIDs already): every field
    /// keeps its own stamp, which the next write of the record folds into the shared form.
    static let postgres = #"""
    UPDATE records r SET fields = converted.fields
    FROM (
        SELECT r2.project_id, r2.id, jsonb_build_object(
            'values', coalesce(jsonb_object_agg(e.key, e.value -> 'value') FILTER (WHERE e.key IS NOT NULL), '{}'::jsonb),
            'writers', coalesce(jsonb_agg(e.value -> 'clientId' ORDER BY e.key) FILTER (WHERE e.key IS NOT NULL), '[]'::jsonb),
            'stamps', coalesce(jsonb_object_agg(e.key, jsonb_build_object(
                'revision', e.value -> 'revision', 'clock', e.value -> 'hlc', 'writer', e.ordinal - 1)) FILTER (WHERE e.key IS NOT NULL), '{}'::jsonb)
        )::text AS fields
        FROM records r2
        LEFT JOIN LATERAL (
            SELECT key, value, row_number() OVER (ORDER BY key) AS ordinal FROM jsonb_each(r2.fields::jsonb)
        ) e ON true
        GROUP BY r2.project_id, r2.id
    ) converted
    WHERE r.project_id = converted.project_id AND r.id = converted.id;
    """#
}

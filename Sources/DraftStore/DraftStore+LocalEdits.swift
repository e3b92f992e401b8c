import Foundation
import FormModel
import GRDB
internal import SyncCore

/// A record's unsent edits (`record_edits`, one row per field, a NULL value for a cleared field): what a
/// person sees is the synced `fields` overlaid by them. An edit writes one small row, whatever the size of
/// the record. Every write here goes with a write of the record's row, which observations watch.
extension DraftStore {
    /// SQL for the unsent edits of the record whose id is the SQL expression `record`, as one JSON object
    /// (`{"site": {"text": "Pump 4"}, "notes": null}`): the shape snapshots keep. `topLevel`: only the edits of
    /// the form's own fields (keys without a `/`), not those of repeat instances; the others are neither
    /// opened nor aggregated.
    static func localEditsJSON(of record: String, topLevel: Bool = false) -> String {
        "(SELECT json_group_object(e.key, json(fs_open(e.value, 'edit', e.record_id, e.key))) FROM record_edits e WHERE e.record_id = \(record)\(topLevel ? " AND instr(e.key, '/') = 0" : ""))"
    }

    /// Sets the unsent edit of `key` (`json` nil: the field was cleared).
    static func setEdit(_ db: Database, record: String, key: String, json: String?) throws {
        try db.cachedStatement(sql: """
            INSERT INTO record_edits (record_id, key, value) VALUES (?1, ?2, fs_seal(?3, 'edit', ?1, ?2))
            ON CONFLICT (record_id, key) DO UPDATE SET value = excluded.value
            """).execute(arguments: [record, key, json])
    }

    /// Drops every unsent edit of the record.
    static func clearEdits(_ db: Database, record: String) throws {
        try db.cachedStatement(sql: "DELETE FROM record_edits WHERE record_id = ?").execute(arguments: [record])
    }
}

import Foundation
import FormModel
import GRDB
internal import SyncCore

/// Migration v3 of the device database: each record's first-version `fields` (every field an object
/// `{"v": value, "b": base value, "r": base revision, "h": clock, "d": device}`) becomes the server's
/// ``RecordFields`` (the base values) plus the unsent local edits beside them; open presentations'
/// snapshots are converted the same way.
enum RecordFieldsConversion {
    struct Legacy: Decodable {
        var v: AnswerValue?
        var b: AnswerValue?
        var r: Int64?
        var h: Int64?
        var d: String?
    }

    static func convert(_ db: Database) throws {
        let pendingFields = Dictionary(grouping: try Row.fetchAll(db, sql: "SELECT record_id, kind, field_id, value FROM outbox"), by: { $0[0] as String })
        let update = try db.makeStatement(sql: "UPDATE records SET fields = ?, local = ? WHERE id = ?")
        for row in try Row.fetchAll(db, sql: "SELECT id, fields, server_revision FROM records") {
            let id: String = row[0]
            let (fields, local) = try split(row[1], serverRevision: row[2], pending: pendingFields[id] ?? [])
            try update.execute(arguments: [fields, local, id])
        }
        let snapshots = try db.makeStatement(sql: "UPDATE presentations SET snapshot_fields = ? WHERE id = ?")
        for row in try Row.fetchAll(db, sql: "SELECT p.id, p.snapshot_fields, r.server_revision, p.record_id FROM presentations p JOIN records r ON r.id = p.record_id") {
            let (fields, local) = try split(row[1], serverRevision: row[2], pending: pendingFields[row[3] as String] ?? [])
            try snapshots.execute(arguments: [#"{"fields":\#(fields),"local":\#(local)}"#, row[0] as String])
        }
    }

    /// The synced fields and the local edits of one first-version `fields` column.
    static func split(_ json: String, serverRevision: Int64, pending: [Row]) throws -> (fields: String, local: String) {
        let legacy = try JSONDecoder().decode([String: Legacy].self, from: Data(json.utf8))
        var touched = Set<String>()
        for row in pending {
            switch row[1] as String {
            case "set": if let field: String = row[2] { touched.insert(field) }
            case "create": if let value: String = row[3] { touched.formUnion(try fieldValues(json: value).keys) }
            default: break
            }
        }
        var synced = RecordFields()
        var local: FieldValues = [:]
        for (field, entry) in legacy {
            if serverRevision > 0, entry.r ?? 0 > 0 || entry.b != nil {
                synced[field] = FieldState(value: entry.b, revision: entry.r ?? serverRevision, hlc: HybridTimestamp(rawValue: entry.h ?? 0), clientID: entry.d ?? "unknown-device")
            }
            if serverRevision == 0 || touched.contains(field) || entry.v != entry.b {
                local[field] = .some(entry.v)
            }
        }
        return (String(decoding: synced.jsonBytes(), as: UTF8.self), fieldValuesJSON(local))
    }
}

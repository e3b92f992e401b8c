import Foundation
import FieldSheetTesting
import GRDB
import Testing
@testable import DraftStore

/// A database written by v7 (the view of attachment references with one extraction per source) opens with v8
/// (the answers gathered once, the reference read once) and its view lists the same references.
struct AttachmentReferencesMigrationTests {
    static func answer(_ letter: Character, name: String) -> String {
        let sha = String(repeating: letter, count: 64)
        return #"{"attachment":{"sha256":"\#(sha)","bytes":\#(name.count * 1000),"type":"image/jpeg","name":"\#(name)"}}"#
    }

    static let query = "SELECT record_id, sha256, bytes, type, name FROM attachment_references ORDER BY record_id, sha256, name"

    static func references(_ db: Database) throws -> [[DatabaseValue]] {
        try Row.fetchAll(db, sql: query).map { row in (0..<5).map { row[$0] as DatabaseValue } }
    }

    @Test func aVersion7DatabaseUpgradesAndItsViewListsTheSameReferences() async throws {
        let directory = TemporaryDirectory("references-migration")
        let path = directory.url.appendingPathComponent("v7.sqlite").path
        let (first, second) = (UUID().uuidString.lowercased(), UUID().uuidString.lowercased())
        let before: [[DatabaseValue]]
        let queue = try DatabaseQueue(path: path)
        do {
            try DeviceMigrations.migrator.migrate(queue, upTo: "v7-attachments")
            before = try await queue.write { db in
                try db.execute(sql: "INSERT INTO forms (id, version, title, definition, imported_at) VALUES ('damage-report', 1, 'Damage', '{}', 0)")
                // Synced values: one photo, beside answers json_each gives as bare text, a number and null.
                let fields = #"{"values":{"photo":\#(Self.answer("a", name: "synced.jpg")),"site":{"text":"Depot"},"note":"bare text","count":3,"gone":null},"writers":["d"],"stamp":{"revision":2,"clock":1,"writer":0}}"#
                for id in [first, second] {
                    try db.execute(sql: """
                        INSERT INTO records (id, form_id, form_version, state, created_at, updated_at, server_revision, fields)
                        VALUES (?, 'damage-report', 1, 'submitted', 1, 2, 2, ?)
                        """, arguments: [id, id == first ? fields : #"{"values":{},"writers":[]}"#])
                }
                // An unsent edit with a new photo, one cleared field, one text edit.
                try db.execute(sql: "INSERT INTO record_edits (record_id, key, value) VALUES (?, 'photo', ?), (?, 'site', ?), (?, 'due', NULL)",
                               arguments: [first, Self.answer("b", name: "edited.jpg"), first, #"{"text":"Yard"}"#, first])
                // An open presentation's snapshot, both parts, with bare text beside the photos.
                let snapshot = #"{"fields":{"values":{"photo":\#(Self.answer("c", name: "snap.jpg")),"site":"bare"},"writers":[]},"local":{"photo":\#(Self.answer("d", name: "snaplocal.jpg")),"note":"bare","due":null}}"#
                try db.execute(sql: """
                    INSERT INTO presentations (id, record_id, kind, owner, opened_at, snapshot_state, snapshot_updated_at, snapshot_fields)
                    VALUES ('p1', ?, 'edit', 'test', 1, 'submitted', 1, ?)
                    """, arguments: [second, snapshot])
                // Both sides of a logged conflict, and a conflict over a text field.
                try db.execute(sql: """
                    INSERT INTO conflicts (record_id, field_id, policy, local_value, remote_value, detected_at)
                    VALUES (?, 'photo', 'manual', ?, ?, 1), (?, 'site', 'manual', '{"text":"A"}', NULL, 1)
                    """, arguments: [second, Self.answer("e", name: "mine.jpg"), Self.answer("f", name: "theirs.jpg"), second])
                return try Self.references(db)
            }
        }
        #expect(before.count == 6, "v7 lists one reference from each of its six sources: \(before)")

        // The upgrade alone (opening a DraftStore would also end the presentation a killed process left open).
        // From v13 the view reads values through the store's SQL functions: here those of a store without a key.
        queue.inDatabase { db in StoreEncryption().register(db) }
        try DeviceMigrations.migrator.migrate(queue)
        let (after, applied, viewSQL) = try await queue.read { db in
            (try Self.references(db),
             try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"),
             try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'attachment_references'") ?? "")
        }
        #expect(applied.contains("v8-attachment-references-once"))
        #expect(viewSQL.contains("WITH answers"), "the view was recreated by v8")
        #expect(viewSQL.contains("fs_open_fields(r.fields, 'record', r.id)"), "and by v13")
        #expect(after == before)
        #expect(Set(after.compactMap { String.fromDatabaseValue($0[4]) }) == ["synced.jpg", "edited.jpg", "snap.jpg", "snaplocal.jpg", "mine.jpg", "theirs.jpg"])
    }
}

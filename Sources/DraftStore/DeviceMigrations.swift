import Foundation
import GRDB

/// The device database's migrations, append-only: a migration that has shipped is never edited.
///
/// `Schema/device-migrations.sql` holds the same statements as the contract; a test migrates a fresh
/// database and compares `sqlite_master` with that file. Columns are named by string, never by a model type.
enum DeviceMigrations {
    /// The identifiers this build knows, in order. A database that has applied any other identifier
    /// was written by a newer version of the app.
    static var identifiers: [String] { migrator.migrations }

    /// The migrator with every migration registered.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-device-schema") { db in
            for statement in v1 {
                try db.execute(sql: statement)
            }
            try db.execute(
                sql: "INSERT INTO sync_state (id, device_id, clock) VALUES (1, ?, 0)",
                arguments: [UUID().uuidString.lowercased()])
        }
        migrator.registerMigration("v2-sync-in-flight") { db in
            for statement in v2 {
                try db.execute(sql: statement)
            }
        }
        migrator.registerMigration("v3-record-fields") { db in
            try db.execute(sql: v3)
            try RecordFieldsConversion.convert(db)
        }
        return migrator
    }()

    // Records keep the server's fields as sent (`fields`, RecordFields) and, beside them, the unsent local
    // edits (`local`); existing rows are converted by RecordFieldsConversion.
    static let v3 = "ALTER TABLE records ADD COLUMN local TEXT NOT NULL DEFAULT '{}'"

    // A record's coalesced mutation is frozen here (id and exact body) in a transaction of its own before
    // it is sent, so a retry after a crash or a lost response sends the same id and content and the server
    // answers with its stored outcome instead of applying it twice. One in flight per record.
    static let v2: [String] = [
        """
        CREATE TABLE sent_mutations (
            mutation_id TEXT PRIMARY KEY NOT NULL,
            record_id TEXT NOT NULL UNIQUE,
            last_outbox_id INTEGER NOT NULL,
            body TEXT NOT NULL,
            created_at INTEGER NOT NULL
        )
        """,
    ]

    // Why one row per record: raw SQLite on a 2-core machine writes 140–170k records/s when a 20-field
    // record is one row with its fields and per-field metadata in one JSON column, against 14–17k records/s
    // with a row per field. Sync pushes and pulls whole records, so the record row carries every field's value, base value,
    // base revision, HLC and device inside `fields`; an edit rewrites one entry with SQLite's json_set.
    static let v1: [String] = [
        """
        CREATE TABLE forms (
            id TEXT NOT NULL,
            version INTEGER NOT NULL,
            title TEXT NOT NULL,
            definition TEXT NOT NULL,
            imported_at INTEGER NOT NULL,
            PRIMARY KEY (id, version)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE records (
            id TEXT PRIMARY KEY NOT NULL,
            form_id TEXT NOT NULL,
            form_version INTEGER NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('draft', 'submitted', 'deleted')),
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            server_revision INTEGER NOT NULL DEFAULT 0,
            fields TEXT NOT NULL DEFAULT '{}',
            FOREIGN KEY (form_id, form_version) REFERENCES forms (id, version)
        )
        """,
        "CREATE INDEX records_by_state ON records (state, updated_at, id, form_id, form_version, created_at)",
        """
        CREATE TABLE presentations (
            id TEXT PRIMARY KEY NOT NULL,
            record_id TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
            kind TEXT NOT NULL CHECK (kind IN ('new', 'resume', 'edit')),
            owner TEXT NOT NULL,
            opened_at INTEGER NOT NULL,
            snapshot_state TEXT NOT NULL,
            snapshot_updated_at INTEGER NOT NULL,
            snapshot_fields TEXT NOT NULL
        )
        """,
        "CREATE UNIQUE INDEX presentations_by_record ON presentations (record_id)",
        """
        CREATE TABLE outbox (
            mutation_id INTEGER PRIMARY KEY AUTOINCREMENT,
            record_id TEXT NOT NULL,
            presentation_id TEXT,
            kind TEXT NOT NULL CHECK (kind IN ('create', 'set', 'submit', 'delete')),
            form_id TEXT,
            form_version INTEGER,
            field_id TEXT,
            value TEXT,
            base_revision INTEGER NOT NULL,
            hlc INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        )
        """,
        "CREATE INDEX outbox_by_record ON outbox (record_id)",
        """
        CREATE TABLE conflicts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            record_id TEXT NOT NULL,
            field_id TEXT NOT NULL,
            policy TEXT NOT NULL,
            local_value TEXT,
            local_hlc INTEGER,
            local_device TEXT,
            remote_value TEXT,
            remote_hlc INTEGER,
            remote_device TEXT,
            detected_at INTEGER NOT NULL,
            resolved_at INTEGER
        )
        """,
        "CREATE INDEX conflicts_by_record ON conflicts (record_id)",
        """
        CREATE TABLE sync_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            device_id TEXT NOT NULL,
            cursor TEXT,
            clock INTEGER NOT NULL DEFAULT 0,
            last_sync_at INTEGER
        )
        """,
    ]
}

import Foundation
import GRDB

/// The device database's migrations, append-only: a migration that has shipped is never edited.
///
/// Their SQL is `Schema/device-migrations.sql`, compiled in at build time as ``DeviceSchema`` (the
/// SchemaConstants plugin): each migration of that file runs its statements, then its Swift step below if it
/// has one. Columns are named by string, never by a model type.
enum DeviceMigrations {
    /// The identifiers this build knows, in order. A database that has applied any other identifier
    /// was written by a newer version of the app.
    static var identifiers: [String] { migrator.migrations }

    /// What a migration does besides its SQL, by migration identifier; each runs after that migration's statements.
    static let swiftSteps: [String: @Sendable (Database) throws -> Void] = [
        // The device's identity: a random id, and the clock at zero.
        "v1-device-schema": { db in
            try db.execute(
                sql: "INSERT INTO sync_state (id, device_id, clock) VALUES (1, ?, 0)",
                arguments: [UUID().lowercased])
        },
        // Records written before the one record representation are converted.
        "v3-record-fields": { db in try RecordFieldsConversion.convert(db) },
    ]

    /// The migrator with every migration registered.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        for migration in DeviceSchema.migrations {
            let step = swiftSteps[migration.id]
            migrator.registerMigration(migration.id) { db in
                for statement in migration.statements {
                    try db.execute(sql: statement)
                }
                try step?(db)
            }
        }
        return migrator
    }()
}

import GRDB
import ServerStorage

extension SQLiteStorage {
    /// How often a pull waiting on a project checks the counter row for commits by another server process
    /// on the same data directory (pushes through this process wake it at once). One read per project
    /// per interval, however many pulls wait, and none while nobody waits.
    package static let changePollInterval: Duration = .milliseconds(500)

    public func lastSequence(projectID: Int64) async throws -> Int64 {
        try await Self.lastSequence(pool, projectID: projectID)
    }

    static func lastSequence(_ pool: DatabasePool, projectID: Int64) async throws -> Int64 {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT last_sequence FROM projects WHERE id = ?", arguments: [projectID]) ?? 0
        }
    }

    /// The notifier of a storage on `pool`, polling its counter rows while pulls wait.
    static func changeNotifier(_ pool: DatabasePool) -> ChangeNotifier {
        ChangeNotifier(poll: .init(interval: changePollInterval) { projectID in try await lastSequence(pool, projectID: projectID) })
    }
}

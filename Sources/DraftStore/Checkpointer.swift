import Foundation
import GRDB

/// Moves WAL checkpoints off the edit path.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses the threshold, so one edit in a few
/// hundred also copies the WAL into the database file and fsyncs it: that was the edit latency's p99.
/// Instead, after every `interval` commits a passive checkpoint runs in the background on a connection of
/// its own (it never blocks the writer), and the writer's own automatic checkpoint is raised to a
/// backstop it should not reach. Checkpoints are crash-safe in SQLite: killing the process mid-way loses nothing.
final class Checkpointer: @unchecked Sendable {
    /// Pages the writer lets the WAL reach before checkpointing inline (SQLite's default is 1,000).
    static let writerBackstopPages = 8_000
    /// Commits between background checkpoints.
    let interval: Int
    private let path: String
    private let lock = NSLock()
    private var commits = 0
    private var running = false
    private var connection: DatabaseQueue?

    init(path: String, interval: Int = 100) {
        self.path = path
        self.interval = interval
    }

    /// Counts a commit; every `interval` commits starts a background checkpoint unless one is running.
    func noteCommit() {
        let start: Bool = lock.withLock {
            commits += 1
            guard commits >= interval, !running else { return false }
            commits = 0
            running = true
            return true
        }
        guard start else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            defer { lock.withLock { running = false } }
            do {
                let queue = try lock.withLock { () throws -> DatabaseQueue in
                    if let connection { return connection }
                    var configuration = Configuration()
                    configuration.label = "DraftStore.checkpointer"
                    configuration.busyMode = .timeout(1)
                    let opened = try DatabaseQueue(path: path, configuration: configuration)
                    connection = opened
                    return opened
                }
                _ = try queue.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            } catch {
                // A busy or failed background checkpoint is harmless: the WAL keeps the data and the
                // next one (or the writer's backstop) catches up.
            }
        }
    }
}

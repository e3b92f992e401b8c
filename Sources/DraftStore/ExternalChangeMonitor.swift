import Foundation
import GRDB

/// Notices commits made by other processes (or other stores) on the same database file and tells this
/// store's observations, which then read their queries again.
///
/// GRDB's observations see the commits of this store's own writer only. Another process's commit is
/// detected with `PRAGMA data_version` on this store's writer connection: its value changes exactly when
/// a *different* connection has committed, never for the writer's own commits. The check is a few
/// microseconds and runs only when ``FileChangeWatcher`` reports that a database file was written; when
/// the value moved, `Database.notifyChanges(in: .fullDatabase)` makes every observation fetch again.
///
/// The watch runs while at least one observation is being iterated (each holds a ``Lease``).
final class ExternalChangeMonitor: @unchecked Sendable {
    /// Keeps the monitor running while it exists.
    final class Lease: Sendable {
        let monitor: ExternalChangeMonitor
        init(_ monitor: ExternalChangeMonitor) { self.monitor = monitor }
        deinit { monitor.release() }
    }

    private let pool: DatabasePool
    private let path: String
    private let lock = NSLock()
    private var users = 0
    private var watcher: FileChangeWatcher?
    /// The writer's `data_version` at the last check (touched on `checks` only).
    private var lastVersion: Int64?
    /// Checks run one at a time; a check asked for while one is queued is the same check.
    private let checks = DispatchQueue(label: "DraftStore.externalChanges", qos: .userInitiated)
    private var checkQueued = false

    init(pool: DatabasePool, path: String) {
        self.pool = pool
        self.path = path
    }

    /// Starts watching (when nobody was) and returns what keeps it going.
    func acquire() -> Lease {
        lock.withLock {
            users += 1
            if users == 1 {
                watcher = FileChangeWatcher(databasePath: path) { [weak self] in self?.requestCheck() }
                // The first check sets the baseline; see check().
                checks.async { [self] in
                    lastVersion = nil
                    check()
                }
            }
        }
        return Lease(self)
    }

    func release() {
        let stopping: FileChangeWatcher? = lock.withLock {
            users -= 1
            guard users == 0 else { return nil }
            defer { watcher = nil }
            return watcher
        }
        stopping?.stop()
    }

    /// How many observations hold the watch (for tests).
    var activeUsers: Int { lock.withLock { users } }

    func requestCheck() {
        let enqueue: Bool = lock.withLock {
            guard !checkQueued else { return false }
            checkQueued = true
            return true
        }
        guard enqueue else { return }
        checks.async { [self] in
            lock.withLock { checkQueued = false }
            check()
        }
    }

    /// Reads the writer's `data_version`; when it moved, or on the first check, every observation reads
    /// again. The first check notifies too, because an observation's first read may have run before it:
    /// a commit from elsewhere in between would otherwise stay unseen (the extra read finds an equal value,
    /// which is not emitted).
    private func check() {
        do {
            try pool.write { db in
                let version = try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
                guard version != lastVersion else { return }
                lastVersion = version
                try db.notifyChanges(in: .fullDatabase)
            }
        } catch {
            // The database is busy or failing: the observations' own next read reports a lasting
            // failure; the next file event checks again.
        }
    }
}

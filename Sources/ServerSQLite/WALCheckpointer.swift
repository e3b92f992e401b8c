import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// The WAL's checkpoints, off the writer's path.
///
/// SQLite's own auto-checkpoint runs on the connection that commits: every ~1,000 pages the single writer
/// copies the WAL back into the database (and syncs it) before its push is answered, and the pushes waiting
/// behind it wait too. Here the writer's commit only counts: a WAL hook on the writer (it replaces SQLite's
/// auto-checkpoint, which is a WAL hook too) asks, once the WAL holds ``Bounds/request`` frames, for a
/// `PASSIVE` checkpoint run on a connection of its own on a queue of its own; the writer goes on. A passive
/// checkpoint never blocks the writer or a reader; the writer starts the WAL over at its next transaction once
/// a checkpoint copied all of it.
///
/// The WAL stays bounded: should it still reach ``Bounds/limit`` frames (checkpoints falling behind the writer),
/// the writer checkpoints itself, `PASSIVE`, as SQLite's auto-checkpoint does: it copies what no reader still
/// needs and never waits for a reader, so a long read cannot hold the writer (and the pushes behind it) either.
/// As with SQLite's own, a reader that holds an old snapshot for long keeps the WAL from starting over until it ends.
///
/// Crash safety is SQLite's, unchanged: a commit is durable once its frames are in the WAL (`synchronous=FULL`
/// syncs the WAL at each commit); a checkpoint only moves committed pages into the database, syncing it
/// (`synchronous=FULL` on the checkpoint's connection too), and is safe to interrupt at any point. Other
/// processes on the same data directory (a second server instance, a command-line command) each check their own
/// writer's commits the same way; a checkpoint from any connection serves them all.
package final class WALCheckpointer: Sendable {
    /// When checkpoints run, in WAL frames (pages, 4 KiB by default).
    package struct Bounds: Sendable, Hashable {
        /// The WAL's frames from which each commit asks for a passive checkpoint: SQLite's auto-checkpoint bound.
        package var request: Int32
        /// The WAL's frames from which the writer checkpoints itself (`PASSIVE`) after its commit.
        package var limit: Int32

        package init(request: Int32, limit: Int32) {
            self.request = request
            self.limit = limit
        }

        /// 1,000 frames (about 4 MB) and 10,000 (about 40 MB).
        package static let standard = Bounds(request: 1_000, limit: 10_000)
    }

    /// What the checkpoints did so far.
    package struct Statistics: Sendable, Hashable {
        /// Passive checkpoints run off the writer's path.
        package var passive = 0
        /// Of those, the ones that copied the whole WAL.
        package var complete = 0
        /// Checkpoints the writer ran itself at ``Bounds/limit``.
        package var byWriter = 0
        /// Checkpoints that found the database busy (another process's checkpoint running, on the same database).
        package var busy = 0
        /// Checkpoints that failed otherwise (their error is not the writer's: the next one tries again).
        package var failures = 0
    }

    private struct State {
        /// A checkpoint is queued and has not started.
        var queued = false
        /// The checkpoints' own connection, opened at the first.
        var connection: DatabaseQueue?
        var statistics = Statistics()
    }

    let path: String
    let bounds: Bounds
    private let configuration: Configuration
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "FieldSheet.SQLiteStorage.checkpoints", qos: .utility)

    /// Checkpoints of the database at `path`; `configuration` is the one its connections are opened with.
    init(path: String, bounds: Bounds, configuration: Configuration) {
        self.path = path
        self.bounds = bounds
        self.configuration = configuration
    }

    package var statistics: Statistics { state.withLock { $0.statistics } }

    /// Returns once the checkpoints asked for so far have run (tests: a database file no checkpoint is writing).
    package func settled() async {
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }

    /// What the writer's WAL hook holds: the checkpointer, weakly (the connection may outlive it).
    private final class Hook: @unchecked Sendable {
        weak var checkpointer: WALCheckpointer?
        init(_ checkpointer: WALCheckpointer) { self.checkpointer = checkpointer }
    }

    /// Replaces SQLite's auto-checkpoint of `db` (a writer's connection) with this checkpointer's.
    func install(on db: Database) {
        // One small object per writer connection, released never: SQLite holds it for the connection's life.
        let context = Unmanaged.passRetained(Hook(self)).toOpaque()
        sqlite3_wal_hook(db.sqliteConnection, { context, connection, _, frames in
            guard let context, let connection else { return SQLITE_OK }
            Unmanaged<Hook>.fromOpaque(context).takeUnretainedValue().checkpointer?.committed(connection, frames: frames)
            return SQLITE_OK
        }, context)
    }

    /// After each commit of the writer, on its thread, with the frames the WAL now holds.
    private func committed(_ connection: OpaquePointer, frames: Int32) {
        if frames >= bounds.limit {
            // The writer's own, as SQLite's auto-checkpoint: passive, inside the WAL hook, where SQLite runs that one.
            let code = sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            state.withLock {
                switch code {
                case SQLITE_OK: $0.statistics.byWriter += 1
                case SQLITE_BUSY: $0.statistics.busy += 1
                default: $0.statistics.failures += 1
                }
            }
        } else if frames >= bounds.request {
            let ask = state.withLock { state in
                if state.queued { return false }
                state.queued = true
                return true
            }
            if ask {
                queue.async { [weak self] in self?.checkpoint() }
            }
        }
    }

    /// A passive checkpoint on the checkpoints' connection.
    private func checkpoint() {
        // Taken off before it runs: a commit while it runs asks for the next.
        let connection = state.withLock { state in
            state.queued = false
            return state.connection
        }
        do {
            let database = try connection ?? open()
            let result = try database.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            state.withLock {
                $0.statistics.passive += 1
                if result.checkpointedFrameCount == result.walFrameCount { $0.statistics.complete += 1 }
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            state.withLock { $0.statistics.busy += 1 }
        } catch {
            state.withLock { $0.statistics.failures += 1 }
        }
    }

    private func open() throws -> DatabaseQueue {
        // Never create the file: a checkpoint asked for just before the data directory was moved or removed
        // has nothing to do.
        guard FileManager.default.fileExists(atPath: path) else { throw DatabaseError(resultCode: .SQLITE_CANTOPEN) }
        let database = try DatabaseQueue(path: path, configuration: configuration)
        state.withLock { $0.connection = database }
        return database
    }
}

import Foundation
import GRDB

/// What commits changed among the rows a records list is made of: the `records` rows by rowid, the
/// `outbox` and `conflicts` rows added or updated (their record is read after the commit), and whether
/// rows of those two were deleted (their record cannot be known any more, so every count is read again).
struct RecordListChange: Sendable {
    /// Everything may have changed (another process committed, or a transaction touched too many rows).
    var everything = false
    var recordRows: Set<Int64> = []
    var outboxRows: Set<Int64> = []
    var conflictRows: Set<Int64> = []
    var outboxDeleted = false
    var conflictsDeleted = false

    /// Past this many rows, reading the whole list is cheaper than reading the rows one by one.
    static let rowLimit = 1_000

    var isEmpty: Bool {
        !everything && recordRows.isEmpty && outboxRows.isEmpty && conflictRows.isEmpty && !outboxDeleted && !conflictsDeleted
    }

    var rowCount: Int { recordRows.count + outboxRows.count + conflictRows.count }

    mutating func merge(_ other: RecordListChange) {
        everything = everything || other.everything || rowCount + other.rowCount > Self.rowLimit
        if everything {
            self = RecordListChange(everything: true)
            return
        }
        recordRows.formUnion(other.recordRows)
        outboxRows.formUnion(other.outboxRows)
        conflictRows.formUnion(other.conflictRows)
        outboxDeleted = outboxDeleted || other.outboxDeleted
        conflictsDeleted = conflictsDeleted || other.conflictsDeleted
    }
}

/// Collects, on the store's writer connection, what each commit changed in `records`, `outbox` and
/// `conflicts`, and signals the list observation that owns it once the commit is on disk. Changes of a
/// transaction that rolls back are dropped. An unspecified change (`Database.notifyChanges(in:)`, which
/// ``ExternalChangeMonitor`` calls when another process committed, and a pull calls for `record_reviews`, a
/// WITHOUT ROWID table SQLite reports no row of) asks for the whole list again.
///
/// GRDB holds it weakly (`.observerLifetime`): it stops observing when its observation ends.
final class RecordListTracker: TransactionObserver, @unchecked Sendable {
    static let tables: Set<String> = ["records", "outbox", "conflicts", "record_reviews"]

    /// The transaction under way; touched on the writer's queue only.
    private var pending = RecordListChange()
    private let lock = NSLock()
    /// Committed and not yet taken by the observation.
    private var committed = RecordListChange()
    /// One element per commit that changed something; a burst waiting to be read is one element.
    let signals: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (signals, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    deinit { continuation.finish() }

    /// The changes committed since the last call.
    func take() -> RecordListChange {
        lock.withLock {
            defer { committed = RecordListChange() }
            return committed
        }
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        Self.tables.contains(eventKind.tableName)
    }

    func databaseDidChange() {
        pending.everything = true
    }

    func databaseDidChange(with event: DatabaseEvent) {
        switch (event.tableName, event.kind) {
        case ("records", _): pending.recordRows.insert(event.rowID)
        case ("outbox", .delete): pending.outboxDeleted = true
        case ("outbox", _): pending.outboxRows.insert(event.rowID)
        case ("conflicts", .delete): pending.conflictsDeleted = true
        case ("conflicts", _): pending.conflictRows.insert(event.rowID)
        default: break
        }
        if pending.rowCount > RecordListChange.rowLimit {
            pending = RecordListChange(everything: true)
            stopObservingDatabaseChangesUntilNextTransaction()
        }
    }

    func databaseDidCommit(_ db: Database) {
        let change = pending
        pending = RecordListChange()
        guard !change.isEmpty else { return }
        lock.withLock { committed.merge(change) }
        continuation.yield()
    }

    func databaseDidRollback(_ db: Database) {
        pending = RecordListChange()
    }
}

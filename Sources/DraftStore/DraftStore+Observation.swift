import Foundation
import FormModel
import GRDB

/// One record as a screen that shows it needs it: its answers and state, its open conflicts and how
/// many of its changes wait to be sent.
public struct ObservedRecord: Sendable, Hashable {
    /// The record as stored: answers, state, sync base and review.
    public var record: StoredRecord
    /// Conflicts of this record waiting for a person, oldest first.
    public var openConflicts: [StoredConflict]
    /// Unsent changes of the record in the outbox.
    public var waitingChanges: Int

    /// The current answers, by field id.
    public var answers: [String: AnswerValue] { record.answers }
    /// Draft or submitted.
    public var state: RecordState { record.state }
}

extension DraftStore {
    /// The records `query` selects, as a list that stays current: the list now, then again after every
    /// commit that changes it — from a `FormSession`, a sync, or another process on this home.
    ///
    /// ```swift
    /// for try await records in store.observeRecords() {
    ///     for record in records { print(record.syncMark, record.formTitle) }
    /// }
    /// ```
    ///
    /// After a commit in this process only the records it touched are read again, so a change reaches
    /// the list in about the time of reading those few rows, however long the list is.
    public func observeRecords(_ query: RecordListQuery = RecordListQuery()) -> StoreObservation<[RecordListSummary]> {
        let pool = pool
        return StoreObservation(source: .stream { Self.recordListValues(pool, query) }, monitor: changeMonitor, doing: "listing records", path: path)
    }

    /// One record (answers, state, open conflicts), as it is now and after every change; nil while there
    /// is no such record (deleted drafts disappear; a record deleted after it synced stays, `deleted`).
    public func observeRecord(_ id: UUID) -> StoreObservation<ObservedRecord?> {
        let key = id.lowercased
        return observe(doing: "reading record \(key)", tables: ["records", "outbox", "conflicts", "record_reviews"]) { db in
            guard let record = try Self.fetchRecord(db, id: id) else { return nil }
            return ObservedRecord(
                record: record,
                openConflicts: try Self.fetchConflicts(db, openOnly: true, record: id),
                waitingChanges: try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox WHERE record_id = ?", arguments: [key]) ?? 0)
        }
    }

    /// The conflict log (only the conflicts waiting for a person when `openOnly`), oldest first, as it is
    /// now and after every change.
    public func observeConflicts(openOnly: Bool = true) -> StoreObservation<[StoredConflict]> {
        observe(doing: "listing conflicts", tables: ["conflicts"]) { db in
            try Self.fetchConflicts(db, openOnly: openOnly, record: nil)
        }
    }

    /// Where this device stands with the server (queued changes, open conflicts, last sync), now and after
    /// every change. What a sync under way is doing (progress, the last error) is known to the process
    /// that runs it: `SyncService.status()` in SyncClient adds it to this.
    public func observeSyncStatus() -> StoreObservation<SyncStatus> {
        observe(doing: "reading the sync status", tables: ["outbox", "conflicts", "sync_state", "blobs", "records"], Self.fetchSyncStatus)
    }

    /// An observation of `fetch`, read again after commits that touch `tables` (any commit by another process).
    func observe<Value: Sendable & Equatable>(doing: String, tables: [String], _ fetch: @escaping @Sendable (Database) throws -> Value) -> StoreObservation<Value> {
        StoreObservation(source: .query(pool: pool, regions: tables, fetch: fetch), monitor: changeMonitor, doing: doing, path: path)
    }

    /// The records list now, then after each commit that changes it: a ``RecordListTracker`` on the
    /// writer says which rows each commit touched, and a ``RecordListCache`` reads only those again.
    static func recordListValues(_ pool: DatabasePool, _ query: RecordListQuery) -> AsyncThrowingStream<[RecordListSummary], any Error> {
        AsyncThrowingStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                do {
                    // Registered before the first read: a commit in between is read again, never missed.
                    let tracker = RecordListTracker()
                    try await pool.writeWithoutTransaction { db in db.add(transactionObserver: tracker, extent: .observerLifetime) }
                    let cache = RecordListCache(query: query)
                    var last = try await pool.read { db in
                        try cache.reload(db)
                        return try cache.list(db)
                    }
                    continuation.yield(last)
                    for await _ in tracker.signals {
                        let change = tracker.take()
                        guard !change.isEmpty else { continue }
                        let list = try await pool.read { db in
                            try cache.apply(change, db)
                            return try cache.list(db)
                        }
                        guard list != last else { continue }
                        last = list
                        continuation.yield(list)
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

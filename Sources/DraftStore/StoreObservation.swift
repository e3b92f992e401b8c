import Foundation
import GRDB

/// Values read from the device database, delivered as an `AsyncSequence` a screen can iterate:
/// the current value first, then a new one after every commit that changes it.
///
/// Commits from this process (a `FormSession`, a sync) are noticed at once; commits from another
/// process on the same home (the `fieldsheet` CLI while an app runs) through SQLite's `PRAGMA
/// data_version`, checked when the database's files change (`ExternalChangeMonitor`; docs/client-library.md).
/// Nothing is re-read on a timer. A burst of commits that arrives while a value is being read or
/// waits to be consumed becomes one value (a pulled page of 1,000 records is one transaction, so one
/// value), and a commit that leaves the value as it was emits nothing.
///
/// Cancelling the task that iterates ends the observation and frees what it holds. A failure to read
/// ends the sequence with a ``DraftStoreError``.
///
/// ```swift
/// for try await records in store.observeRecords(RecordListQuery(states: [.draft])) {
///     show(records)
/// }
/// ```
public struct StoreObservation<Value: Sendable & Equatable>: AsyncSequence, Sendable {
    public typealias Element = Value

    let pool: DatabasePool
    let monitor: ExternalChangeMonitor
    let regions: [String]
    let doing: String
    let path: String
    let fetch: @Sendable (Database) throws -> Value

    public func makeAsyncIterator() -> AsyncIterator {
        // Watch other processes before the first read, so a commit between the two is not missed.
        let lease = monitor.acquire()
        let observation = ValueObservation
            .tracking(regions: regions.map { Table($0) }, fetch: fetch)
            .removeDuplicates()
        // Newest only: a consumer slower than the commits sees the latest value, not a backlog.
        let values = observation.values(in: pool, bufferingPolicy: .bufferingNewest(1))
        return AsyncIterator(base: values.makeAsyncIterator(), lease: lease, doing: doing, path: path)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncValueObservation<Value>.Iterator
        /// Keeps the watch on other processes alive while this iterator exists.
        let lease: ExternalChangeMonitor.Lease
        let doing: String
        let path: String

        /// The next value; nil once the iterating task is cancelled.
        /// - Throws: ``DraftStoreError`` when the database cannot be read.
        public mutating func next() async throws -> Value? {
            do {
                return try await base.next()
            } catch is CancellationError {
                return nil
            } catch {
                throw DraftStoreError.wrap(error, doing: doing, path: path)
            }
        }
    }
}

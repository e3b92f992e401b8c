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

    /// Where the values come from.
    enum Source: Sendable {
        /// A query read again whole after each commit touching `regions` (GRDB's `ValueObservation`).
        case query(pool: DatabasePool, regions: [String], fetch: @Sendable (Database) throws -> Value)
        /// Values made by the observation itself, which knows what each commit changed.
        case stream(@Sendable () -> AsyncThrowingStream<Value, any Error>)
    }

    let source: Source
    let monitor: ExternalChangeMonitor
    let doing: String
    let path: String

    public func makeAsyncIterator() -> AsyncIterator {
        // Watch other processes before the first read, so a commit between the two is not missed.
        let lease = monitor.acquire()
        switch source {
        case let .query(pool, regions, fetch):
            let observation = ValueObservation
                .tracking(regions: regions.map { Table($0) }, fetch: fetch)
                .removeDuplicates()
            // Newest only: a consumer slower than the commits sees the latest value, not a backlog.
            let values = observation.values(in: pool, bufferingPolicy: .bufferingNewest(1))
            return AsyncIterator(base: .query(values.makeAsyncIterator()), lease: lease, doing: doing, path: path)
        case let .stream(make):
            return AsyncIterator(base: .stream(make().makeAsyncIterator()), lease: lease, doing: doing, path: path)
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        enum Base {
            case query(AsyncValueObservation<Value>.Iterator)
            case stream(AsyncThrowingStream<Value, any Error>.Iterator)
        }

        var base: Base
        /// Keeps the watch on other processes alive while this iterator exists.
        let lease: ExternalChangeMonitor.Lease
        let doing: String
        let path: String

        /// The next value; nil once the iterating task is cancelled.
        /// - Throws: ``DraftStoreError`` when the database cannot be read.
        public mutating func next() async throws -> Value? {
            do {
                switch base {
                case var .query(iterator):
                    defer { base = .query(iterator) }
                    return try await iterator.next()
                case var .stream(iterator):
                    defer { base = .stream(iterator) }
                    return try await iterator.next()
                }
            } catch is CancellationError {
                return nil
            } catch {
                throw DraftStoreError.wrap(error, doing: doing, path: path)
            }
        }
    }
}

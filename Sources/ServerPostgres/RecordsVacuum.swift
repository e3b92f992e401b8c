import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

/// Counts the records an instance wrote since it last asked for a vacuum, and says when the next one is due.
struct VacuumSchedule: Sendable, Hashable {
    /// How many written records make a vacuum due.
    let threshold: Int
    /// Written since the last vacuum was due.
    private(set) var written = 0

    init(threshold: Int) {
        self.threshold = max(1, threshold)
    }

    /// Adds `count` written records; true when they reach the threshold, and the count starts again from zero
    /// (records written while that vacuum runs count towards the next).
    mutating func wrote(_ count: Int) -> Bool {
        written += max(0, count)
        guard written >= threshold else { return false }
        written = 0
        return true
    }
}

/// Keeps the visibility map of `records` current after large imports: once this instance's pushes wrote
/// ``PostgresStorage/Configuration/vacuumAfterWrittenRecords`` records since the last time, it runs
/// `VACUUM (SKIP_LOCKED) records` in the background, on a connection of its own.
///
/// Why: the count of an OData walk (and any other index-only scan of `records`) reads only the index where the
/// visibility map marks the table's pages all-visible; pages written since the last vacuum are read from the
/// table, one visit per counted record. Autovacuum sets the map too, but only when it next visits the database
/// (every `autovacuum_naptime`, a minute by default, a cluster setting a table's storage parameters cannot
/// shorten) and only once about a fifth of the table is new (`autovacuum_vacuum_insert_scale_factor`), so on a
/// large table possibly not at all after an import; until then the count of 50,000 freshly imported records also
/// reads their 50,000 table rows.
///
/// The vacuum runs after a push's commit and outside its transaction, never holding up a push; a vacuum already
/// under way is not started twice (one more follows if more became due meanwhile); `SKIP_LOCKED` lets another
/// instance's (or autovacuum's) vacuum or analyze of the table go on while this one gives way; a failure is logged
/// and the next threshold tries again. A vacuum that gave way, or a role that does not own the table, leaves only
/// a notice in PostgreSQL's own log (the server is not told) and the table to the next threshold or to
/// autovacuum.
final class RecordsVacuum: Sendable {
    private let configuration: PostgresStorage.Configuration
    private let logger: Logger
    private let schedule: NIOLockedValueBox<VacuumSchedule>?
    private let due: AsyncStream<Void>.Continuation
    private let stream: AsyncStream<Void>

    /// Vacuums the database of `configuration` after every `configuration.vacuumAfterWrittenRecords` records
    /// (nil or less than 1: never).
    init(configuration: PostgresStorage.Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        schedule = configuration.vacuumAfterWrittenRecords.flatMap { $0 > 0 ? NIOLockedValueBox(VacuumSchedule(threshold: $0)) : nil }
        (stream, due) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// After a push committed: counts the records it wrote, and wakes ``run()`` when a vacuum is due.
    func wrote(_ count: Int) {
        guard count > 0, let schedule, schedule.withLockedValue({ $0.wrote(count) }) else { return }
        due.yield()
    }

    /// Vacuums each time one is due, one at a time, ``settle`` after it became due, until cancelled (without a
    /// threshold none is ever due, and this only waits: it ends with the storage's other background work).
    func run() async {
        for await _ in stream {
            do { try await Task.sleep(for: Self.settle) } catch { return }
            await vacuum()
        }
    }

    /// How long a due vacuum waits before it starts. VACUUM marks a page all-visible only when it may set its
    /// rows' commit hint bits, which it may not while a commit made with `synchronous_commit = off` is not yet
    /// on disk (the WAL writer flushes it within `wal_writer_delay`, 200 ms by default): a vacuum started the
    /// moment the last push committed would leave that push's pages to the next one. Pushes that arrive
    /// meanwhile are covered by the same vacuum.
    static let settle: Duration = .seconds(1)

    /// One `VACUUM (SKIP_LOCKED) records` on a connection opened for it (not one of the pool's, which pushes
    /// and reads keep), with no statement timeout (neither the pool's nor one the role or database sets): a
    /// vacuum of a large table may take longer than a request, and the instance stopping closes its connection
    /// rather than wait for it.
    private func vacuum() async {
        let options = configuration.ownConnection(applicationName: "fieldsheet-server vacuum", startup: [("statement_timeout", "0")])
        let began = ContinuousClock.now
        do {
            let connection = try await PostgresConnection.connect(configuration: options, id: 1, logger: logger)
            do {
                try await withTaskCancellationHandler {
                    _ = try await connection.query("VACUUM (SKIP_LOCKED) records", logger: .quiet).collect()
                } onCancel: {
                    // The future's close, the one a synchronous handler can start: the instance stops without
                    // waiting for the vacuum (PostgreSQL ends it when it notices; a vacuum cut short loses nothing).
                    _ = connection.close() as EventLoopFuture<Void>
                }
            } catch {
                try? await connection.close()
                throw error
            }
            try? await connection.close()
            // A VACUUM that gave way (SKIP_LOCKED) or that the role may not run ends with a notice, not an error:
            // finished, not necessarily vacuumed. The next threshold tries again.
            logger.debug("VACUUM (SKIP_LOCKED) records finished", metadata: ["duration": "\(ContinuousClock.now - began)"])
        } catch where !Task.isCancelled {
            logger.warning(
                "Background VACUUM of records failed (autovacuum still does it later)",
                metadata: ["error": "\(String(reflecting: error))"])
        } catch {}
    }
}

import Foundation
import GRDB
import ServerStorage
import Synchronization

/// Group commit of pushes: pushes that reach the single writer while it is busy wait together and are then
/// written in one transaction, each in a savepoint of its own, so a crowd of devices pays one commit (one
/// fsync of the WAL, with `synchronous=FULL`) per group instead of one per push.
///
/// Every guarantee of a push holding the writer alone is kept:
/// - each push is decided on what the pushes before it in the group wrote (they share the transaction), in
///   the order they reached the writer, so sequences still follow commit order;
/// - a push whose work throws (a planning problem, a snapshot that moved, a conflict already resolved) is
///   rolled back to its savepoint, leaving nothing of it, and the others go on;
/// - no push is answered before the group's commit is durable;
/// - a database error inside the group (a full disk, say) rolls the whole group back, and each of its
///   pushes is then written again in a transaction of its own, so one push's failure fails only that push.
///
/// Once a group is durable, what each of its pushes does at its commit (``run(_:_:durable:)``: handing its
/// webhook deliveries over) is done for the whole group at once, on the writer's thread the moment its commit
/// returns, before any push is answered, so that none of it waits for a Swift task to be resumed (the group's
/// drain, or its pushes one after another).
package final class GroupCommit: Sendable {
    typealias Work = @Sendable (Database) throws -> PushPlan

    struct Job: Sendable {
        let work: Work
        let durable: (@Sendable (PushPlan, Date) -> Void)?
        let continuation: CheckedContinuation<PushPlan, any Error>
        let queued: ContinuousClock.Instant
    }

    private struct State {
        var jobs: [Job] = []
        var writing = false
        var statistics = Statistics()
    }

    private let state = Mutex(State())

    /// What the writer did so far: groups committed, pushes in them, and the longest any push waited for
    /// the writer.
    package struct Statistics: Sendable, Hashable {
        package var groups = 0
        package var pushes = 0
        package var longestWait = Duration.zero
        package var largestGroup = 0
    }

    package var statistics: Statistics { state.withLock { $0.statistics } }

    /// Pushes waiting for the writer now.
    package var waiting: Int { state.withLock { $0.jobs.count } }

    /// The most pushes one transaction takes. The first of a group waits for all of them to be written, and a
    /// group's webhook deliveries are handed over together when it commits, so the cap bounds both: with 64, 200
    /// devices pushing 10 records each at once made 640-event bursts and missed the webhook target (p50 51–59 ms);
    /// with 16 it is met (p50 13–15 ms, p99 35–44 ms), for 0–8% fewer requests a second (BENCHMARKS.md, "A group
    /// commit of at most 16 pushes").
    package static let largestGroup = 16

    /// Runs `work` in the writer's next group and returns once that group's commit is durable; `durable` is
    /// called with what `work` returned and the moment the commit was durable, on the writer's thread right
    /// after the commit and before any push of the group is answered (not when `work` failed). It must be
    /// quick: the writer waits for it.
    func run(_ pool: DatabasePool, _ work: @escaping Work, durable: (@Sendable (PushPlan, Date) -> Void)? = nil) async throws -> PushPlan {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLock { state in
                state.jobs.append(Job(work: work, durable: durable, continuation: continuation, queued: .now))
                if state.writing { return false }
                state.writing = true
                return true
            }
            if start {
                Task.detached { await self.drain(pool) }
            }
        }
    }

    /// Writes groups until no push waits.
    private func drain(_ pool: DatabasePool) async {
        while true {
            let group = state.withLock { state in
                let jobs = Array(state.jobs.prefix(Self.largestGroup))
                state.jobs.removeFirst(jobs.count)
                if jobs.isEmpty { state.writing = false }
                return jobs
            }
            guard !group.isEmpty else { return }
            let began = ContinuousClock.now
            let results = await Self.write(group, pool)
            let wait = group.map { $0.queued.duration(to: began) }.max() ?? .zero
            state.withLock { state in
                state.statistics.groups += 1
                state.statistics.pushes += group.count
                state.statistics.longestWait = max(state.statistics.longestWait, wait)
                state.statistics.largestGroup = max(state.statistics.largestGroup, group.count)
            }
            for (job, result) in zip(group, results) { job.continuation.resume(with: result) }
        }
    }

    /// The group in one transaction, each push in a savepoint; after a database error, each push alone. Each
    /// push's `durable` is called on the writer once its commit returned.
    private static func write(_ group: [Job], _ pool: DatabasePool) async -> [Result<PushPlan, any Error>] {
        let works = group.map(\.work)
        let handOvers = group.map(\.durable)
        if works.count > 1 {
            do {
                return try await pool.writeWithoutTransaction { db in
                    var results: [Result<PushPlan, any Error>] = []
                    results.reserveCapacity(works.count)
                    try db.inTransaction(.immediate) {
                        for work in works {
                            do {
                                var result: Result<PushPlan, any Error> = .failure(CancellationError())
                                try db.inSavepoint {
                                    result = .success(try work(db))
                                    return .commit
                                }
                                results.append(result)
                            } catch let error as DatabaseError {
                                // Not this push's decision: the database itself failed. The group is rolled
                                // back and its pushes are written one by one.
                                throw error
                            } catch {
                                results.append(.failure(error))
                            }
                        }
                        return .commit
                    }
                    Self.handOver(results, handOvers)
                    return results
                }
            } catch {
                // Fall through: each push in a transaction of its own.
            }
        }
        var results: [Result<PushPlan, any Error>] = []
        for (work, handOver) in zip(works, handOvers) {
            do {
                results.append(.success(try await pool.writeWithoutTransaction { db in
                    var plan = PushPlan()
                    try db.inTransaction {
                        plan = try work(db)
                        return .commit
                    }
                    handOver?(plan, Date())
                    return plan
                }))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    /// Calls each push's `durable` with what it wrote, at the moment its commit returned.
    private static func handOver(_ results: [Result<PushPlan, any Error>], _ handOvers: [(@Sendable (PushPlan, Date) -> Void)?]) {
        let durable = Date()
        for (result, handOver) in zip(results, handOvers) {
            if case .success(let plan) = result { handOver?(plan, durable) }
        }
    }
}

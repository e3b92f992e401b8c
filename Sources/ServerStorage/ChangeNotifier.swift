import NIOConcurrencyHelpers

/// Wakes the pulls waiting for a project's change feed to move (`GET …/changes?wait=S`), in this process.
///
/// The feed's position is the project's `last_sequence`. A waiting pull registers the position it has
/// already looked at and sleeps until something announces a higher one, or its deadline passes, or its
/// task is cancelled (the client went away). Announcements come from:
/// - this process's pushes, once their transaction is committed (``notify(projectID:lastSequence:)``);
/// - other processes, through the storage: PostgreSQL's `LISTEN`, or, for SQLite, a ``Poll`` of the
///   project's counter row that runs only while someone waits (one read per project per interval, however
///   many pulls wait on it), for a second server process sharing the data directory.
///
/// The highest position announced per project is remembered, so a pull that registers just after a
/// commit it did not see is woken at once rather than missing it.
public final class ChangeNotifier: Sendable {
    /// How to learn of commits made by other processes when nothing announces them.
    public struct Poll: Sendable {
        public var interval: Duration
        /// The project's current `last_sequence`.
        public var lastSequence: @Sendable (Int64) async throws -> Int64

        public init(interval: Duration, lastSequence: @escaping @Sendable (Int64) async throws -> Int64) {
            self.interval = interval
            self.lastSequence = lastSequence
        }
    }

    private struct Waiter {
        var threshold: Int64
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct Project {
        var known: Int64 = 0
        var waiters: [Int: Waiter] = [:]
        var polling = false
    }

    private struct State {
        var projects: [Int64: Project] = [:]
        var nextID = 0
        /// Whether any pull ever waited here, and who waits for that (``untilFirstWait()``).
        var waited = false
        var firstWaitWatchers: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Set by ``stop()``: the server is stopping, and nothing waits any more.
        var stopped = false
    }

    private let state = NIOLockedValueBox(State())
    private let poll: Poll?

    public init(poll: Poll? = nil) {
        self.poll = poll
    }

    /// Announces that the project's feed reached `lastSequence` (committed): wakes every pull waiting
    /// for less. Cheap when nobody waits; announcing an old position does nothing.
    public func notify(projectID: Int64, lastSequence: Int64) {
        let woken = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            var project = state.projects[projectID] ?? Project()
            guard lastSequence > project.known else { return [] }
            project.known = lastSequence
            var woken: [CheckedContinuation<Void, Never>] = []
            for (id, waiter) in project.waiters where waiter.threshold < lastSequence {
                woken.append(waiter.continuation)
                project.waiters[id] = nil
            }
            state.projects[projectID] = project
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Wakes every waiting pull of every project, to look again (announcements may have been lost, as
    /// while the PostgreSQL listener was reconnecting).
    public func wakeAll() {
        let woken = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            var woken: [CheckedContinuation<Void, Never>] = []
            for projectID in state.projects.keys {
                woken += state.projects[projectID]?.waiters.values.map(\.continuation) ?? []
                state.projects[projectID]?.waiters = [:]
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Ends every wait now and any wait started later at once (each returns false, so its pull answers
    /// with what it has): the server is stopping and must not hold requests for their deadlines.
    public func stop() {
        state.withLockedValue { $0.stopped = true }
        wakeAll()
    }

    /// Whether ``stop()`` was called.
    public var isStopped: Bool { state.withLockedValue { $0.stopped } }

    /// How many pulls wait now (for metrics and tests).
    public var waiting: Int {
        state.withLockedValue { state in state.projects.values.reduce(0) { $0 + $1.waiters.count } }
    }

    /// Waits until the project's feed is announced past `sequence`, until `deadline`, or until the task is
    /// cancelled. Returns true when woken by an announcement (or ``wakeAll()``), false at the deadline, on
    /// cancellation or once the notifier is stopped. Either way the caller looks at the feed again or answers.
    public func wait(projectID: Int64, past sequence: Int64, until deadline: ContinuousClock.Instant) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.waitForAnnouncement(projectID: projectID, past: sequence); return !Task.isCancelled && !self.isStopped }
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Returns once the feed is announced past `sequence`, or at once when the task is (or gets) cancelled.
    private func waitForAnnouncement(projectID: Int64, past sequence: Int64) async {
        let id = state.withLockedValue { state in
            defer { state.nextID &+= 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let (resumeNow, startPoll, watchers) = state.withLockedValue { state -> (Bool, Bool, [CheckedContinuation<Void, Never>]) in
                    var project = state.projects[projectID] ?? Project()
                    if Task.isCancelled || state.stopped || project.known > sequence { return (true, false, []) }
                    project.waiters[id] = Waiter(threshold: sequence, continuation: continuation)
                    let startPoll = poll != nil && !project.polling
                    if startPoll { project.polling = true }
                    state.projects[projectID] = project
                    state.waited = true
                    defer { state.firstWaitWatchers = [:] }
                    return (false, startPoll, Array(state.firstWaitWatchers.values))
                }
                if resumeNow { continuation.resume() }
                if startPoll { startPolling(projectID) }
                for watcher in watchers { watcher.resume() }
            }
        } onCancel: {
            let continuation = state.withLockedValue { state in state.projects[projectID]?.waiters.removeValue(forKey: id)?.continuation }
            continuation?.resume()
        }
    }

    /// Returns once some pull has waited here (at once if one has), or when the task is cancelled: the
    /// PostgreSQL listener connects only then, so an instance nobody long-polls holds no extra connection.
    public func untilFirstWait() async {
        let id = state.withLockedValue { state in
            defer { state.nextID &+= 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLockedValue { state -> Bool in
                    if state.waited || Task.isCancelled { return true }
                    state.firstWaitWatchers[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLockedValue { state in state.firstWaitWatchers.removeValue(forKey: id) }?.resume()
        }
    }

    /// Reads the project's position every interval while someone waits on it, and announces what it reads.
    private func startPolling(_ projectID: Int64) {
        guard let poll else { return }
        Task {
            while true {
                try? await Task.sleep(for: poll.interval)
                if let last = try? await poll.lastSequence(projectID) { notify(projectID: projectID, lastSequence: last) }
                let stop = state.withLockedValue { state -> Bool in
                    guard state.projects[projectID]?.waiters.isEmpty ?? true else { return false }
                    state.projects[projectID]?.polling = false
                    return true
                }
                if stop { return }
            }
        }
    }
}

extension ChangeNotifier {
    /// Announces what a committed push wrote (nothing when it wrote no record).
    public func announce(_ plan: PushPlan, projectID: Int64) {
        guard let last = plan.records.map(\.sequence).max() else { return }
        notify(projectID: projectID, lastSequence: last)
    }
}

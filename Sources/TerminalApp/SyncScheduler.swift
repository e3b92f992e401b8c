import Foundation

/// Something that knows when the server has a change for this device: once the server can hold a pull
/// open until a change commits (`changes?after=C&wait=S`), an implementation over that request makes
/// the app sync as soon as another device's change lands. `waitForChange` returns when there is one;
/// it throws when it cannot tell (offline, the server does not support it), and the scheduler tries again later.
public protocol ServerChangeSignal: Sendable {
    func waitForChange() async throws
}

/// When the app syncs by itself: at start, after each sheet is completed or dismissed, on a timer —
/// backing off while the server cannot be reached — and whenever a `ServerChangeSignal` reports a change.
/// Requests that arrive during a sync are folded into one more sync after it.
public actor SyncScheduler {
    /// Why a sync runs.
    public enum Reason: String, Sendable, Hashable {
        case start, localChange, timer, serverChange, person
    }

    /// The timer's rules.
    public struct Timing: Sendable, Hashable {
        /// After a good sync, the next one by timer (a poll, until a change signal makes it unneeded).
        public var interval: Duration
        /// After a failed sync, the first retry; each further failure doubles it, up to `maximumRetry`.
        public var firstRetry: Duration
        public var maximumRetry: Duration

        public init(interval: Duration = .seconds(300), firstRetry: Duration = .seconds(5), maximumRetry: Duration = .seconds(300)) {
            self.interval = interval
            self.firstRetry = firstRetry
            self.maximumRetry = maximumRetry
        }

        /// The wait before the next sync after `failures` failures in a row (0: after a good sync).
        public func delay(afterFailures failures: Int) -> Duration {
            guard failures > 0 else { return interval }
            var delay = firstRetry
            for _ in 1..<failures where delay < maximumRetry { delay *= 2 }
            return min(delay, maximumRetry)
        }
    }

    let timing: Timing
    /// Runs one sync; returns whether it reached the server and finished.
    let run: @Sendable (Reason) async -> Bool
    private var wakeups: AsyncStream<Reason>.Continuation?
    private var loop: Task<Void, Never>?
    private var timer: Task<Void, Never>?
    private var watcher: Task<Void, Never>?
    /// Failed syncs in a row.
    public private(set) var failures = 0
    /// When the timer fires next (nil when no timer is set).
    public private(set) var nextTimer: ContinuousClock.Instant?

    public init(timing: Timing = Timing(), run: @escaping @Sendable (Reason) async -> Bool) {
        self.timing = timing
        self.run = run
    }

    /// Starts syncing (one sync at once), and listens to `changes` when given.
    public func start(changes: (any ServerChangeSignal)? = nil) {
        guard loop == nil else { return }
        // At most one request waits while a sync runs: several become one sync.
        let (stream, continuation) = AsyncStream.makeStream(of: Reason.self, bufferingPolicy: .bufferingNewest(1))
        wakeups = continuation
        loop = Task { [weak self] in
            for await reason in stream {
                guard let self else { return }
                await self.runOnce(reason)
            }
        }
        if let changes {
            watcher = Task { [weak self] in
                var quiet = 0
                while !Task.isCancelled {
                    do {
                        try await changes.waitForChange()
                        quiet = 0
                        await self?.request(.serverChange)
                    } catch {
                        quiet += 1
                        guard let delay = self?.timing.delay(afterFailures: quiet) else { return }
                        try? await Task.sleep(for: delay)
                    }
                }
            }
        }
        continuation.yield(.start)
    }

    /// Asks for a sync soon (a sheet closed, the person pressed s, the server changed).
    public func request(_ reason: Reason) {
        wakeups?.yield(reason)
    }

    /// Stops the timer, the change watcher and the loop (a sync under way finishes).
    public func stop() {
        timer?.cancel()
        watcher?.cancel()
        loop?.cancel()
        wakeups?.finish()
        wakeups = nil
        nextTimer = nil
    }

    private func runOnce(_ reason: Reason) async {
        timer?.cancel()
        let succeeded = await run(reason)
        failures = succeeded ? 0 : failures + 1
        schedule(after: timing.delay(afterFailures: failures))
    }

    private func schedule(after delay: Duration) {
        timer?.cancel()
        guard wakeups != nil else { return }
        nextTimer = ContinuousClock.now + delay
        timer = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await self?.request(.timer)
        }
    }
}

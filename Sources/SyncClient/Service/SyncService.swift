import DraftStore
import Foundation
import Logging

/// Sync that runs by itself: start it once and it keeps the device and the server in step until its
/// task is cancelled.
///
/// - At start, one sync.
/// - Local changes: it observes the device's outbox (`DraftStore.observeSyncStatus()`), so a change
///   made by a `FormSession`, by a conflict resolution or by another process on the same home (the CLI)
///   is synced ``Timing/localChangeDelay`` after the last one. ``syncNow(_:)`` syncs at once.
/// - Server changes: it holds one long-poll open (``SyncEngine/waitForChanges(timeout:)``, on a
///   connection of its own) and syncs as soon as the server answers that another device's change is
///   waiting. No timer: nothing is polled.
/// - Failures: while the server cannot be reached, syncs are retried after ``Timing/firstRetry``,
///   doubling up to ``Timing/maximumRetry``; nothing queued is lost meanwhile.
/// - Requests that arrive during a sync become one more sync after it.
///
/// ```swift
/// import Logging
///
/// let configuration = SyncConfiguration(serverURL: "https://sync.example.org", project: "demo", token: token)
/// let service = SyncService(engine: SyncEngine(store: store, transport: try makeDefaultTransport(),
///                                              configuration: configuration, logger: Logger(label: "sync")))
/// let syncing = Task { await service.run() }
/// for await status in await service.status() { show(status) }
/// syncing.cancel()   // stops: the sync under way ends at its next step, the long-poll is dropped
/// ```
public actor SyncService {
    let engine: SyncEngine
    /// The engine that holds the long-poll, over a transport of its own (a transport may send one
    /// request at a time, as CurlTransport does, and a held request must not delay a sync).
    let waiter: SyncEngine
    /// How soon the service syncs after changes, and how it backs off.
    public nonisolated let timing: Timing
    private let eventBroadcast = Broadcast<SyncServiceEvent>()
    private let statusBroadcast = Broadcast<SyncServiceStatus>(latest: SyncServiceStatus())
    /// (syncs finished so far, whether the last one succeeded), for the server watcher.
    private let completions = Broadcast<(Int, Bool)>()
    private var wakeups: AsyncStream<Reason>.Continuation?
    private var state = SyncServiceStatus()
    private var started = 0
    private var finished = 0
    private var retry: Task<Void, Never>?
    private var localChange: Task<Void, Never>?

    /// - Parameters:
    ///   - engine: syncs the device's store with its server.
    ///   - waitTransport: the transport for the long-poll; by default the engine transport's
    ///     ``HTTPTransport/independent()`` (a second connection for ``CurlTransport``, the same session
    ///     for ``URLSessionTransport``).
    ///   - timing: how soon after a local change to sync, how to back off, how long a long-poll waits.
    public init(engine: SyncEngine, waitTransport: (any HTTPTransport)? = nil, timing: Timing = Timing()) {
        self.engine = engine
        self.timing = timing
        let transport = waitTransport ?? engine.transport.independent()
        waiter = SyncEngine(store: engine.store, transport: transport, configuration: engine.configuration, logger: engine.logger)
    }

    /// Runs until the calling task is cancelled: syncs at start, after local changes, when the server
    /// reports a change, and again after failures. Returns once cancelled (a sync under way stops at its
    /// next step). A second call while one runs returns at once. The ``events()`` and ``status()``
    /// streams end when this returns.
    public func run() async {
        guard wakeups == nil else { return }
        // At most one request waits while a sync runs: several become one sync.
        let (requests, continuation) = AsyncStream.makeStream(of: Reason.self, bufferingPolicy: .bufferingNewest(1))
        wakeups = continuation
        continuation.yield(.start)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.syncLoop(requests) }
            group.addTask { await self.watchLocalChanges() }
            group.addTask { await self.watchServer() }
            await group.waitForAll()
        }
        retry?.cancel()
        localChange?.cancel()
        wakeups = nil
        eventBroadcast.finish()
        statusBroadcast.finish()
        completions.finish()
    }

    /// Asks for a sync now (a "Sync now" button, a sheet just closed); folded into the next sync when
    /// one is under way. Does nothing unless ``run()`` is running.
    public func syncNow(_ reason: Reason = .requested) {
        wakeups?.yield(reason)
    }

    /// Every sync's start, progress and end, from now on.
    public func events() -> AsyncStream<SyncServiceEvent> {
        eventBroadcast.subscribe()
    }

    /// The status now, then after every change (a slow reader gets the newest only).
    public func status() -> AsyncStream<SyncServiceStatus> {
        statusBroadcast.subscribe()
    }

    // MARK: - Syncing

    private func syncLoop(_ requests: AsyncStream<Reason>) async {
        for await reason in requests {
            retry?.cancel()
            let succeeded = await perform(reason)
            if Task.isCancelled { break }
            state.failures = succeeded ? 0 : state.failures + 1
            if !succeeded {
                schedule(.retry, after: timing.delay(afterFailures: state.failures))
            } else if let interval = timing.interval {
                schedule(.timer, after: interval)
            } else {
                state.nextRetry = nil
            }
            publishStatus()
        }
    }

    private func perform(_ reason: Reason) async -> Bool {
        started += 1
        state.isSyncing = true
        state.progress = nil
        publishStatus()
        eventBroadcast.yield(.started(reason))
        let events = eventBroadcast
        let succeeded: Bool
        do {
            let summary = try await engine.sync { progress in
                events.yield(.progress(progress))
                Task { await self.noteProgress(progress) }
            }
            state.lastSuccess = Date()
            state.lastError = nil
            eventBroadcast.yield(.finished(reason, summary))
            succeeded = true
        } catch {
            let failure = error as? SyncError ?? SyncError(.storage, "The sync stopped: \(error)")
            if !(error is CancellationError) {
                engine.logger.notice("Sync failed", metadata: ["reason": "\(reason.rawValue)", "error": "\(failure)"])
                state.lastError = failure
                eventBroadcast.yield(.failed(reason, failure))
            }
            succeeded = false
        }
        finished += 1
        state.isSyncing = false
        state.progress = nil
        publishStatus()
        completions.yield((finished, succeeded))
        return succeeded
    }

    private func noteProgress(_ progress: SyncEvent) {
        guard state.isSyncing else { return }
        state.progress = progress
        publishStatus()
    }

    private func schedule(_ reason: Reason, after delay: Duration) {
        retry?.cancel()
        state.nextRetry = Date().addingTimeInterval(Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
        retry = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await self?.syncNow(reason)
        }
    }

    private func publishStatus() {
        statusBroadcast.yield(state)
    }

    // MARK: - Local changes

    /// Syncs shortly after the outbox grows, whoever made it grow, or after an opened record asked for
    /// attachments that are not here.
    private func watchLocalChanges() async {
        var previous: (changes: Int, downloads: Int)?
        do {
            for try await status in engine.store.observeSyncStatus() {
                state.device = status
                publishStatus()
                defer { previous = (status.queuedChanges, status.wantedDownloads) }
                guard let previous, status.queuedChanges > previous.changes || status.wantedDownloads > previous.downloads else { continue }
                localChange?.cancel()
                let delay = timing.localChangeDelay
                localChange = Task { [weak self] in
                    try? await Task.sleep(for: delay)
                    guard !Task.isCancelled else { return }
                    await self?.syncNow(.localChange)
                }
            }
        } catch {
            // The database cannot be read: every sync reports it too; local changes are still sent by
            // the syncs that follow server changes and retries.
            engine.logger.warning("Watching local changes stopped", metadata: ["error": "\(error)"])
        }
    }

    // MARK: - Server changes

    /// Holds a long-poll open and syncs when the server says a change waits; backs off while it cannot.
    private func watchServer() async {
        var failures = 0
        while !Task.isCancelled {
            let asked = ContinuousClock.now
            do {
                let waiter = self.waiter
                let seconds = timing.waitSeconds
                let answer = try await abandoningOnCancel { try await waiter.waitForChangesAnswer(timeout: TimeInterval(seconds)) }
                failures = 0
                if answer.changed {
                    // Wait for a sync that starts after this request to end: until then the stored cursor
                    // still lies before the change, and a new wait would answer at once.
                    let ends = completions.subscribe()
                    let ticket = started
                    syncNow(.serverChange)
                    var succeeded = true
                    for await (count, ok) in ends where count > ticket {
                        succeeded = ok
                        break
                    }
                    if !succeeded { try await Task.sleep(for: timing.delay(afterFailures: max(1, state.failures))) }
                } else if let retryAfter = answer.retryAfter {
                    // The server did not hold the request (this device or token holds as many waiting pulls as
                    // it may): ask again when it says, within 1 s to 10 min whatever it says.
                    try await Task.sleep(for: min(max(retryAfter, .seconds(1)), .seconds(600)))
                } else if ContinuousClock.now - asked < .seconds(1) {
                    // The server answered without holding the request (one that does not support waiting):
                    // ask again later rather than at once.
                    try await Task.sleep(for: timing.maximumRetry)
                }
            } catch is CancellationError {
                return
            } catch {
                failures += 1
                try? await Task.sleep(for: timing.delay(afterFailures: failures))
            }
        }
    }
}

import Foundation
import Testing
@testable import TerminalApp

/// When the app syncs by itself: at start, on request, retrying with backoff, requests folded together.
struct SyncSchedulerTests {
    /// Polls with a deadline; a long one, because tests that block their thread (tmux, subprocesses) can
    /// hold the few cooperative threads of a 2-core machine for a while.
    func eventually(timeout: Double = 90, _ condition: () async -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return await condition()
    }

    /// A value shared between the test and the scheduler's tasks.
    final class Locked<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func withLock<T>(_ body: (inout Value) -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body(&value)
        }
    }

    final class Calls: Sendable {
        let reasons = Locked<[SyncScheduler.Reason]>([])
        let results: Locked<[Bool]>
        init(results: [Bool]) { self.results = Locked(results) }

        func next(_ reason: SyncScheduler.Reason) -> Bool {
            reasons.withLock { $0.append(reason) }
            return results.withLock { $0.isEmpty ? true : $0.removeFirst() }
        }

        var count: Int { reasons.withLock { $0.count } }
    }

    @Test func backoffDoublesUpToItsCeilingAndAGoodSyncResetsIt() {
        let timing = SyncScheduler.Timing(interval: .seconds(300), firstRetry: .seconds(5), maximumRetry: .seconds(60))
        #expect((0...6).map { timing.delay(afterFailures: $0) } == [.seconds(300), .seconds(5), .seconds(10), .seconds(20), .seconds(40), .seconds(60), .seconds(60)])
    }

    @Test func syncsAtStartAndRetriesByItselfWhileTheServerCannotBeReached() async throws {
        let calls = Calls(results: [false, false, false])
        let scheduler = SyncScheduler(timing: .init(interval: .seconds(3600), firstRetry: .milliseconds(10), maximumRetry: .milliseconds(40))) { calls.next($0) }
        await scheduler.start()
        #expect(await eventually { calls.count >= 4 }, "three failures then a good sync, with no one asking")
        #expect(calls.reasons.withLock { $0 } .prefix(4) == [.start, .timer, .timer, .timer])
        #expect(await eventually { await scheduler.failures == 0 })
        await scheduler.stop()
    }

    @Test func requestsDuringASyncBecomeOneMoreSync() async throws {
        let gate = Locked(false)
        let calls = Calls(results: [])
        let scheduler = SyncScheduler(timing: .init(interval: .seconds(3600))) { reason in
            let result = calls.next(reason)
            while !gate.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(2)) }
            return result
        }
        await scheduler.start()
        #expect(await eventually { calls.count == 1 })
        for _ in 0..<5 { await scheduler.request(.localChange) }
        gate.withLock { $0 = true }
        #expect(await eventually { calls.count == 2 })
        await scheduler.request(.person)
        #expect(await eventually { calls.reasons.withLock { $0.contains(.person) } })
        #expect(calls.reasons.withLock { $0 } == [.start, .localChange, .person], "five requests while syncing made one more sync, not five")
        await scheduler.stop()
    }

    /// A change signal (the server's long-poll, once it exists) makes the app sync at once.
    @Test func aServerChangeSignalTriggersASync() async throws {
        struct OneChange: ServerChangeSignal {
            let fired = Locked(false)
            func waitForChange() async throws {
                if fired.withLock({ let was = $0; $0 = true; return was }) { try await Task.sleep(for: .seconds(3600)) }
            }
        }
        let calls = Calls(results: [])
        let scheduler = SyncScheduler(timing: .init(interval: .seconds(3600))) { calls.next($0) }
        await scheduler.start(changes: OneChange())
        #expect(await eventually { calls.reasons.withLock { $0.contains(.serverChange) } })
        await scheduler.stop()
    }
}

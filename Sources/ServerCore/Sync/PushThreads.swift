import Foundation

/// Threads for the CPU work of pushes (reading and digesting a body, planning a batch), outside Swift's
/// cooperative pool, whose few threads serve every request. Not Dispatch's global queues either: they run
/// as many items at once as there are cores, so three hostile pushes would keep every other push waiting
/// behind them (measured: 1.2 s). A thread is started whenever no kept thread is free, so no push ever
/// waits for another's thread; a thread that finishes waits for the next work (up to `idleTimeout`)
/// instead of ending, so a steady stream of pushes does not pay a thread's start and end for each step. The
/// threads are named `fs-push` (``setCurrentThreadName(_:)``).
final class PushThreads: @unchecked Sendable {
    /// The threads of every server in this process.
    static let shared = PushThreads()

    // Guarded by `condition`.
    private let condition = NSCondition()
    /// Each piece runs its work and returns how to hand the result back, which its thread does only once it
    /// counts itself free: the caller's next piece of work then reuses that thread instead of starting one.
    private var work: [@Sendable () -> @Sendable () -> Void] = []
    private var next = 0
    private var idle = 0
    private var threads = 0
    let idleTimeout: TimeInterval

    init(idleTimeout: TimeInterval = 10) {
        self.idleTimeout = idleTimeout
    }

    /// Threads alive now (running work or waiting for it).
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return threads
    }

    /// Runs `work` on one of the threads and returns its result.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit {
                let result = Result { try work() }
                return { continuation.resume(with: result) }
            }
        }
    }

    private func submit(_ item: @escaping @Sendable () -> @Sendable () -> Void) {
        condition.lock()
        work.append(item)
        let waiting = work.count - next
        let start = waiting > idle
        if start { threads += 1 } else { condition.signal() }
        condition.unlock()
        if start {
            let thread = Thread { [self] in
                setCurrentThreadName("fs-push")
                serve()
            }
            thread.start()
        }
    }

    /// Takes work until none comes within `idleTimeout`.
    private func serve() {
        condition.lock()
        while true {
            if next == work.count {
                idle += 1
                let deadline = Date(timeIntervalSinceNow: idleTimeout)
                while next == work.count, condition.wait(until: deadline) {}
                idle -= 1
                if next == work.count {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
            let item = work[next]
            next += 1
            if next == work.count {
                work.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            let handBack = item()
            condition.lock()
            idle += 1
            condition.unlock()
            handBack()
            condition.lock()
            idle -= 1
        }
    }
}

import Foundation
import Synchronization

/// Threads for blocking work (libcurl attempts), kept between jobs: a job goes to a free thread, or to a new one
/// when every thread is busy, so jobs never wait for each other; a thread idle for ``idleLifetime`` ends.
///
/// A job may return what is to run once its thread counts as free again (``run(returning:)``): the delivery
/// service frees the delivery's slot and starts the next one there, so that next one takes this very thread
/// (it looks at the queue before it waits) instead of starting a new thread. The threads alive are so never
/// more than the jobs under way or queued at once: with the service, its slots.
final class BlockingWorkers: @unchecked Sendable {
    static let idleLifetime: TimeInterval = 30
    private let name: String
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [@Sendable () -> @Sendable () -> Void] = []
    /// Threads alive; those running a job; those waiting for one. The rest are between jobs and look at the
    /// queue before they wait.
    private var threads = 0
    private var busyThreads = 0
    private var idleThreads = 0
    private var most = 0

    init(name: String) {
        self.name = name
    }

    /// Runs `job` on a worker thread.
    func run(_ job: @escaping @Sendable () -> Void) {
        run(returning: {
            job()
            return {}
        })
    }

    /// Runs `job` on a worker thread, then what it returns on the same thread once that thread is counted free:
    /// a job queued from there takes this thread.
    func run(returning job: @escaping @Sendable () -> @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let free = threads - busyThreads
        let spawn = jobs.count > free
        if spawn {
            threads += 1
            most = max(most, threads)
        } else if jobs.count > free - idleThreads {
            condition.signal()  // more jobs than threads between jobs: wake a waiting one
        }
        condition.unlock()
        if spawn {
            let thread = Thread { [self] in work() }
            thread.start()
        }
    }

    private func work() {
        setCurrentThreadName(name)
        condition.lock()
        while true {
            if !jobs.isEmpty {
                let job = jobs.removeFirst()
                busyThreads += 1
                condition.unlock()
                let then = job()
                condition.lock()
                busyThreads -= 1
                condition.unlock()
                then()
                condition.lock()
                continue
            }
            idleThreads += 1
            let signalled = condition.wait(until: Date(timeIntervalSinceNow: Self.idleLifetime))
            idleThreads -= 1
            if !signalled && jobs.isEmpty { break }
        }
        threads -= 1
        condition.unlock()
    }

    /// How many threads wait for a job (for tests).
    var idle: Int {
        condition.lock()
        defer { condition.unlock() }
        return idleThreads
    }

    /// The most threads alive at once so far (for tests).
    var mostThreads: Int {
        condition.lock()
        defer { condition.unlock() }
        return most
    }
}

/// Names the calling thread as the kernel shows it (`comm`, at most 15 bytes, cut), so a scheduler trace or
/// `top -H` tells the webhook threads apart; called by the thread itself (`pthread_setname_np` on
/// `pthread_self()`): Foundation's `Thread.name`, given before or after the thread started, did not reach the
/// kernel on every new thread.
func setCurrentThreadName(_ name: String) {
    #if os(Linux)
    guard let setName = pthreadSetName else { return }
    var bytes = name.utf8.prefix(15).map { CChar(bitPattern: $0) }
    bytes.append(0)
    _ = setName(pthread_self(), bytes)
    #endif
}

#if os(Linux)
/// glibc's `pthread_setname_np`, which Swift's Glibc module leaves out (a GNU extension, declared only with
/// `_GNU_SOURCE`); nil where the C library has none.
private let pthreadSetName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = {
    guard let symbol = dlsym(nil, "pthread_setname_np") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
}()
#endif

/// A thread that, once started (``start(_:)``), runs its turn each time it is poked (``poke()``) and at least
/// every `interval`, until stopped: the delivery service's dispatcher. A poke is a flag and a condition signal,
/// so it may come from any thread (a push's commit, a worker's finished attempt) without waiting for anything;
/// pokes that come during a turn make one more turn, not one each.
final class DispatchThread: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var poked = false
    private var started = false
    private var stopping = false
    private var ended = false
    private var stopWaiter: CheckedContinuation<Void, Never>?

    private let name: String
    private let interval: TimeInterval

    init(name: String, interval: Duration) {
        self.name = name
        self.interval = WebhookOptions.seconds(interval)
    }

    /// Starts the thread, whose first turn runs at once (a second start does nothing).
    func start(_ turn: @escaping @Sendable () -> Void) {
        condition.lock()
        guard !started else {
            condition.unlock()
            return
        }
        started = true
        poked = true
        condition.unlock()
        let thread = Thread { [self] in loop(turn) }
        thread.name = name
        thread.start()
    }

    /// Asks for a turn as soon as the thread is free.
    func poke() {
        condition.lock()
        poked = true
        condition.signal()
        condition.unlock()
    }

    /// Stops the thread and returns once its last turn ended.
    func stop() async {
        await withCheckedContinuation { continuation in
            condition.lock()
            stopping = true
            if ended || !started {
                condition.unlock()
                continuation.resume()
                return
            }
            stopWaiter = continuation
            condition.signal()
            condition.unlock()
        }
    }

    private func loop(_ turn: @Sendable () -> Void) {
        setCurrentThreadName(name)
        condition.lock()
        while !stopping {
            if !poked {
                _ = condition.wait(until: Date(timeIntervalSinceNow: interval))
                if stopping { break }
            }
            poked = false
            condition.unlock()
            turn()
            condition.lock()
        }
        ended = true
        let waiter = stopWaiter
        stopWaiter = nil
        condition.unlock()
        waiter?.resume()
    }
}

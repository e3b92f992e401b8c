import Foundation

/// Hands every value to each current subscriber's stream; a subscriber that stops iterating is dropped.
/// With `latest`, a new subscriber gets the last value first and a slow one only the newest.
final class Broadcast<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var subscribers: [Int: AsyncStream<Value>.Continuation] = [:]
    private var nextID = 0
    private var latest: Value?
    private let keepsLatest: Bool

    /// - Parameter latest: the value a subscriber gets first (and only the newest when it lags); nil to
    ///   deliver every value, from the next one on.
    init(latest: Value? = nil) {
        self.latest = latest
        keepsLatest = latest != nil
    }

    func subscribe() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: keepsLatest ? .bufferingNewest(1) : .unbounded)
        let id: Int = lock.withLock {
            nextID += 1
            subscribers[nextID] = continuation
            if let latest { continuation.yield(latest) }
            return nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.lock.withLock { _ = self?.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    func yield(_ value: Value) {
        let targets = lock.withLock {
            if keepsLatest { latest = value }
            return Array(subscribers.values)
        }
        for continuation in targets { continuation.yield(value) }
    }

    /// The last value given (with `latest`).
    var current: Value? { lock.withLock { latest } }

    /// Ends every subscriber's stream.
    func finish() {
        let targets = lock.withLock {
            defer { subscribers = [:] }
            return Array(subscribers.values)
        }
        for continuation in targets { continuation.finish() }
    }
}

/// Runs `operation` in a task of its own and returns its result, or throws `CancellationError` as soon
/// as the calling task is cancelled, without waiting for `operation` to end. Cancelling also cancels
/// `operation`'s task, so a held request (a long-poll) ends at once on a transport that stops a request
/// when its task is cancelled (``CurlTransport`` does); on one that cannot, it finishes by itself, its
/// result dropped.
func abandoningOnCancel<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let once = ResumeOnce<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            once.set(continuation)
            once.run(Task {
                do { once.resume(.success(try await operation())) } catch { once.resume(.failure(error)) }
            })
        }
    } onCancel: {
        once.resume(.failure(CancellationError()))
        once.cancelTask()
    }
}

/// A continuation resumed once, whichever of its results comes first (one may come before it is set).
private final class ResumeOnce<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var early: Result<T, any Error>?
    private var done = false
    private var task: Task<Void, Never>?
    private var cancelled = false

    /// Keeps the task that produces the result, to cancel it with ``cancelTask()`` (at once if that came first).
    func run(_ task: Task<Void, Never>) {
        let cancelNow = lock.withLock {
            self.task = task
            return cancelled
        }
        if cancelNow { task.cancel() }
    }

    func cancelTask() {
        let task = lock.withLock {
            cancelled = true
            return self.task
        }
        task?.cancel()
    }

    func set(_ continuation: CheckedContinuation<T, any Error>) {
        let result: Result<T, any Error>? = lock.withLock {
            if let early {
                done = true
                return early
            }
            self.continuation = continuation
            return nil
        }
        if let result { continuation.resume(with: result) }
    }

    func resume(_ result: Result<T, any Error>) {
        let target: CheckedContinuation<T, any Error>? = lock.withLock {
            guard !done else { return nil }
            guard let continuation else {
                if early == nil { early = result }
                return nil
            }
            done = true
            self.continuation = nil
            return continuation
        }
        target?.resume(with: result)
    }
}

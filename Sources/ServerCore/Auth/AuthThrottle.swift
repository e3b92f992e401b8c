import Foundation
import Synchronization

/// Counts failed authentications per address: after `limit` failures from one address within `window`,
/// its further failures are answered 429 with the time left in the window. It never refuses a request by
/// itself: a valid token is checked and accepted whatever the count (``AuthMiddleware``).
package final class AuthThrottle: Sendable {
    struct Entry {
        var failures: Int
        var windowStart: ContinuousClock.Instant
    }

    let limit: Int
    let window: Duration
    private let entries = Mutex<[String: Entry]>([:])

    package init(limit: Int, window: Duration) {
        self.limit = limit
        self.window = window
    }

    /// How long the caller must wait before trying again, or nil when it may try now.
    package func retryAfter(for address: String, now: ContinuousClock.Instant = .now) -> Duration? {
        entries.withLock { entries in
            guard let entry = entries[address] else { return nil }
            let elapsed = entry.windowStart.duration(to: now)
            if elapsed >= window {
                entries[address] = nil
                return nil
            }
            return entry.failures >= limit ? window - elapsed : nil
        }
    }

    /// Records a failed authentication from `address`; returns how long it should wait before trying
    /// again when it has now failed more than `limit` times within the window, nil otherwise.
    @discardableResult
    package func recordFailure(from address: String, now: ContinuousClock.Instant = .now) -> Duration? {
        entries.withLock { entries in
            if entries.count > 100_000 {
                // Forget stale entries so a flood of addresses cannot grow the table without bound.
                entries = entries.filter { $0.value.windowStart.duration(to: now) < window }
            }
            var entry = entries[address] ?? Entry(failures: 0, windowStart: now)
            if entry.windowStart.duration(to: now) >= window { entry = Entry(failures: 0, windowStart: now) }
            entry.failures += 1
            entries[address] = entry
            return entry.failures > limit ? window - entry.windowStart.duration(to: now) : nil
        }
    }
}

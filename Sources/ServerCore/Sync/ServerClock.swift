import Logging
import Synchronization
import SyncCore

/// The server's hybrid logical clock, shared by every request.
package final class ServerClock: Sendable {
    private let clock: Mutex<HybridLogicalClock>

    package init(maximumDriftMillis: Int64) {
        clock = Mutex(HybridLogicalClock(maximumDriftMillis: maximumDriftMillis))
    }

    /// A new reading, later than every earlier one.
    package func now() -> HybridTimestamp {
        clock.withLock { $0.tick() }
    }

    /// Moves the clock past a device's reading; a reading too far ahead is clamped, and the clamped
    /// value is returned.
    package func observe(_ remote: HybridTimestamp) -> (accepted: HybridTimestamp, clamped: Bool) {
        clock.withLock { clock in
            let wall = HybridLogicalClock.wallMillis()
            let clamped = clock.observe(remote, wallMillis: wall)
            return (clamped ? clock.clamp(remote, wallMillis: wall) : remote, clamped)
        }
    }
}

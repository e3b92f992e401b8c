import Foundation

/// Keeps the tests that time requests off a machine busy with other tests' servers and child processes, inside
/// one `swift test` run.
///
/// Every server and child process a fixture starts (``ServerProcess``, ``Subprocess``, the in-process test
/// servers) holds a ``Lease`` while it runs. A test that measures latency runs inside ``exclusive(patience:drain:_:)``
/// (the `.measuresTiming` trait of `FieldSheetTestTraits`): it waits until no lease is held, then holds new
/// leases off until it has finished, so what it times is the server under test rather than its neighbours.
/// The servers and processes it starts itself take no lease.
///
/// Leases are never refused while no timing test runs, so a test that starts a second server while it holds the
/// first cannot deadlock. A timing test that ends while another waits hands the machine over directly, so the
/// timing tests that are ready run back to back. A timing test that finds the machine never quiet (leases overlapping for
/// `patience`) then holds new leases off and waits for the held ones to end, at most `drain` more; past that
/// it runs anyway and says so on standard error.
public final class MachineGate: @unchecked Sendable {
    /// The gate of this test process.
    public static let shared = MachineGate()

    /// Whether the current task runs inside ``exclusive(patience:drain:_:)`` (its own fixtures take no lease).
    @TaskLocal static var insideExclusive = false

    private let lock = NSLock()
    private var leases = 0
    private var exclusiveHeld = false
    /// Timing tests waiting for the machine: when one ends it hands the machine to the next directly, so the
    /// timing tests that are ready run back to back instead of each waiting for a quiet moment.
    private var exclusiveWaiting = 0
    /// Set when a timing test ends while another waits: that one takes the machine without waiting for quiet.
    private var handedOver = false

    public init() {}

    /// A server's or child process's hold on the machine, from its start until ``release()``.
    public final class Lease: @unchecked Sendable {
        private let gate: MachineGate?
        private let lock = NSLock()
        private var released = false

        init(_ gate: MachineGate?) {
            self.gate = gate
        }

        /// Ends the hold (once; later calls do nothing).
        public func release() {
            let first = lock.withLock {
                defer { released = true }
                return !released
            }
            if first { gate?.returnLease() }
        }

        deinit {
            release()
        }
    }

    /// Takes a lease for a server or child process about to start: at once, unless a timing test runs now (then
    /// when it has finished, polling with `Task.sleep`). Inside ``exclusive(patience:drain:_:)`` the lease is
    /// not counted.
    public func lease() async -> Lease {
        if Self.insideExclusive { return Lease(nil) }
        while true {
            let taken = lock.withLock {
                guard !exclusiveHeld, !handedOver else { return false }
                leases += 1
                return true
            }
            if taken { return Lease(self) }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Runs `body` with a lease held (see ``lease()``).
    public func withLease<T>(_ body: () async throws -> T) async rethrows -> T {
        let lease = await lease()
        defer { lease.release() }
        return try await body()
    }

    private func returnLease() {
        lock.withLock { leases -= 1 }
    }

    /// The number of leases held now (for messages).
    public var leasesHeld: Int { lock.withLock { leases } }

    /// Runs `body` while no other test holds a lease: waits (polling with `Task.sleep`) until none is held and no
    /// other timing test runs, then keeps new leases waiting until `body` ends. After `patience` without such a
    /// moment it keeps new leases waiting and waits for the held ones at most `drain` more.
    public func exclusive<T>(
        patience: Duration = .seconds(240), drain: Duration = .seconds(90), _ body: () async throws -> T
    ) async rethrows -> T {
        if Self.insideExclusive { return try await body() }
        let started = ContinuousClock.now
        lock.withLock { exclusiveWaiting += 1 }
        var claimed = false
        while !claimed, ContinuousClock.now - started < patience {
            claimed = lock.withLock {
                guard !exclusiveHeld else { return false }
                guard leases == 0 || handedOver else { return false }
                exclusiveHeld = true
                handedOver = false
                exclusiveWaiting -= 1
                return true
            }
            if !claimed { try? await Task.sleep(for: .milliseconds(50)) }
        }
        if !claimed {
            // The machine was never quiet: hold new leases off (after any other timing test) and let the held
            // ones end.
            while !claimed {
                claimed = lock.withLock {
                    guard !exclusiveHeld else { return false }
                    exclusiveHeld = true
                    handedOver = false
                    exclusiveWaiting -= 1
                    return true
                }
                if !claimed { try? await Task.sleep(for: .milliseconds(50)) }
            }
            let draining = ContinuousClock.now
            while leasesHeld > 0, ContinuousClock.now - draining < drain {
                try? await Task.sleep(for: .milliseconds(50))
            }
            if leasesHeld > 0 {
                FileHandle.standardError.write(Data(
                    "MachineGate: a timing test runs beside \(leasesHeld) servers or processes of other tests (the machine was not quiet within \(patience + drain))\n".utf8))
            }
        }
        let waited = ContinuousClock.now - started
        if waited > .seconds(10) {
            FileHandle.standardError.write(Data("MachineGate: a timing test waited \(waited) for the machine\n".utf8))
        }
        defer {
            lock.withLock {
                exclusiveHeld = false
                handedOver = exclusiveWaiting > 0
            }
        }
        return try await Self.$insideExclusive.withValue(true) { try await body() }
    }
}

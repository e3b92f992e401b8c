import Foundation

/// A hybrid logical clock (Kulkarni et al.): readings follow the wall clock when it moves forward,
/// never go backwards, and move past every reading received from elsewhere.
///
/// Remote readings further ahead of the local wall clock than `maximumDrift` are clamped to
/// `wall + maximumDrift`, so one device with a wrong clock cannot drag everyone's clock into the future.
public struct HybridLogicalClock: Sendable, Hashable {
    /// The last reading handed out or observed.
    public private(set) var last: HybridTimestamp
    /// How far ahead of the local wall clock a remote reading may be before it is clamped.
    public var maximumDriftMillis: Int64

    public init(last: HybridTimestamp = .zero, maximumDriftMillis: Int64 = 5 * 60 * 1000) {
        self.last = last
        self.maximumDriftMillis = maximumDriftMillis
    }

    /// The current wall clock in milliseconds since 1970.
    public static func wallMillis() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// A new reading for a local event, later than every earlier one.
    public mutating func tick(wallMillis: Int64 = HybridLogicalClock.wallMillis()) -> HybridTimestamp {
        if wallMillis > last.millis {
            last = HybridTimestamp(millis: wallMillis, counter: 0)
        } else {
            last = Self.successor(of: last)
        }
        return last
    }

    /// Moves the clock past a reading received from elsewhere.
    /// - Returns: whether the remote reading was too far ahead and was clamped.
    @discardableResult
    public mutating func observe(_ remote: HybridTimestamp, wallMillis: Int64 = HybridLogicalClock.wallMillis()) -> Bool {
        let limit = HybridTimestamp(millis: wallMillis + maximumDriftMillis, counter: 0)
        let clamped = remote > limit
        let accepted = clamped ? limit : remote
        let wall = HybridTimestamp(millis: wallMillis, counter: 0)
        last = max(last, accepted, wall)
        return clamped
    }

    /// The reading a clamped remote value is replaced with.
    public func clamp(_ remote: HybridTimestamp, wallMillis: Int64 = HybridLogicalClock.wallMillis()) -> HybridTimestamp {
        min(remote, HybridTimestamp(millis: wallMillis + maximumDriftMillis, counter: 0))
    }

    static func successor(of reading: HybridTimestamp) -> HybridTimestamp {
        reading.counter == UInt16.max
            ? HybridTimestamp(millis: reading.millis + 1, counter: 0)
            : HybridTimestamp(millis: reading.millis, counter: reading.counter + 1)
    }
}

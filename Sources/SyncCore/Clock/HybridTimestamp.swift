/// A hybrid logical clock reading: wall-clock milliseconds and a counter that orders events within
/// one millisecond (or while the wall clock stands still or runs back).
///
/// Packed into one `Int64` (`millis << 16 | counter`) for storage and the wire; ordering the packed
/// value orders the readings.
public struct HybridTimestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let rawValue: Int64

    public init(rawValue: Int64) {
        self.rawValue = rawValue
    }

    public init(millis: Int64, counter: UInt16) {
        self.rawValue = millis << 16 | Int64(counter)
    }

    /// The smallest reading; every real event comes after it.
    public static let zero = HybridTimestamp(rawValue: 0)

    /// Milliseconds since 1970 of the physical part.
    public var millis: Int64 { rawValue >> 16 }

    /// The logical counter.
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue & 0xFFFF) }

    public static func < (lhs: HybridTimestamp, rhs: HybridTimestamp) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { "\(millis).\(counter)" }
}

import Foundation
import FormModel

/// When a record was created, last changed and last submitted, each read on the clock of the device (or the
/// server, for a change made in the console) where it happened: the author's times, the same on every device
/// and on the server, never the time a copy of the record arrived somewhere.
///
/// On the sync wire each is a whole number of milliseconds since 1970 (`createdAt`, `updatedAt`,
/// `submittedAt`), left out when unknown.
public struct RecordTimes: Sendable, Hashable {
    public var created: Date?
    public var updated: Date?
    /// The latest submission; nil for a record never submitted.
    public var submitted: Date?

    public init(created: Date? = nil, updated: Date? = nil, submitted: Date? = nil) {
        self.created = created
        self.updated = updated
        self.submitted = submitted
    }

    /// Whether no time is known.
    public var isEmpty: Bool { created == nil && updated == nil && submitted == nil }

    /// A time as it is written on the wire: milliseconds since 1970.
    public static func millis(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// A time read from the wire.
    public static func date(millis: Int64) -> Date {
        Date(timeIntervalSince1970: Double(millis) / 1000)
    }

    /// Writes the known times as `createdAt`, `updatedAt`, `submittedAt` (in that order) into an open object.
    public func write(to writer: inout JSONWriter) {
        for (key, date) in [("createdAt", created), ("submittedAt", submitted), ("updatedAt", updated)] {
            guard let date else { continue }
            writer.key(key)
            writer.int(Self.millis(date))
        }
    }

    /// Reads one of the three keys into these times; false for any other key.
    mutating func read(key: String, from reader: inout JSONReader) throws -> Bool {
        switch key {
        case "createdAt": created = try Self.readTime(&reader, key)
        case "updatedAt": updated = try Self.readTime(&reader, key)
        case "submittedAt": submitted = try Self.readTime(&reader, key)
        default: return false
        }
        return true
    }

    private static func readTime(_ reader: inout JSONReader, _ key: String) throws -> Date? {
        if try reader.readNull() { return nil }
        do {
            let millis = try reader.readInt64()
            // Year 0 to 9999: anything outside is not a clock reading.
            guard millis >= -62_167_219_200_000, millis <= 253_402_300_799_999 else {
                throw reader.error("\(key) must be milliseconds since 1970 between the years 0 and 9999, not \(millis)")
            }
            return date(millis: millis)
        } catch var error as JSONReadError {
            error.path = key
            throw error
        }
    }
}

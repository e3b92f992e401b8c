import FieldSheetTesting
import Foundation
@testable import ServerCore
import Testing

/// The console's times, worked out from the seconds, read as a UTC formatter writes them: at the edges
/// (epoch, leap days, centuries, before 1970) and at random instants (seed printed).
struct ConsoleTimeTests {
    static func formatted(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: date)
    }

    @Test func timesReadAsAUTCFormatterWritesThem() {
        let edges: [TimeInterval] = [
            0, -1, -60, -61, 59.999, 60, 86_399, 86_400, 951_782_400 /* 2000-02-29 */, 4_107_542_400 /* 2100-03-01 */,
            1_709_164_799 /* 2024-02-28 23:59:59 */, 1_709_251_200 /* 2024-03-01 */, -2_208_988_800 /* 1900-01-01 */,
            253_402_300_799 /* 9999-12-31 23:59:59 */, 1_795_000_000.75,
        ]
        for seconds in edges {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(ConsoleTime.text(date) == Self.formatted(date), "at \(seconds)")
        }
        let seed = UInt64.random(in: .min ... .max)
        print("ConsoleTimeTests seed: \(seed)")
        var random = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            // Whole milliseconds, as the server keeps times: the formatter rounds to the millisecond (a time
            // 60 µs before a minute would read as that minute), ConsoleTime truncates.
            let seconds = Double(Int64.random(in: -2_208_988_800 ... 253_402_300_799, using: &random)) + Double(Int.random(in: 0..<1000, using: &random)) / 1000
            let date = Date(timeIntervalSince1970: seconds)
            #expect(ConsoleTime.text(date) == Self.formatted(date), "at \(seconds) (seed \(seed))")
        }
        #expect(ConsoleTime.text(nil) == "—")
    }
}

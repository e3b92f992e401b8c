import Foundation
import Synchronization

/// `today()` and `now()` as local date and time (`YYYY-MM-DD`, `YYYY-MM-DDTHH:MM`), read once per evaluation pass.
public struct ExpressionClock: Sendable, Hashable {
    /// Today's date, `YYYY-MM-DD`.
    public var today: String
    /// The date and time now, `YYYY-MM-DDTHH:MM`.
    public var now: String

    /// A clock stopped at this date and time, for evaluations that must not depend on when they run.
    public init(today: String, now: String) {
        self.today = today
        self.now = now
    }

    /// The device's local date and time at `date`.
    ///
    /// The clock is the same for every instant of a local minute: the last one made is kept with that minute
    /// and returned for any `date` in it in the same time zone (every `FormState` asks for the clock, so a
    /// server validating a push of 500 records computed the same calendar fields and formatted the same text
    /// 500 times). The minute is cut short at the zone's next daylight saving transition.
    public static func local(at date: Date = Date(), timeZone: TimeZone = .current) -> ExpressionClock {
        if let kept = lastLocal.withLock({ $0?.clock(at: date, in: timeZone) }) { return kept }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let day = String(format: "%04d-%02d-%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
        let clock = ExpressionClock(today: day, now: day + String(format: "T%02d:%02d", parts.hour ?? 0, parts.minute ?? 0))
        // The local minute holding `date`: from its start (the zone's offset is in whole seconds) for 60 s.
        let offset = Double(timeZone.secondsFromGMT(for: date))
        let start = Date(timeIntervalSince1970: ((date.timeIntervalSince1970 + offset) / 60).rounded(.down) * 60 - offset)
        var end = start.addingTimeInterval(60)
        if let transition = timeZone.nextDaylightSavingTimeTransition(after: start), transition < end { end = transition }
        if start <= date, date < end {
            lastLocal.withLock { $0 = LocalMinute(timeZone: timeZone, start: start, end: end, clock: clock) }
        }
        return clock
    }

    /// The clock of one local minute of one time zone, [`start`, `end`).
    private struct LocalMinute: Sendable {
        var timeZone: TimeZone
        var start: Date
        var end: Date
        var clock: ExpressionClock

        func clock(at date: Date, in zone: TimeZone) -> ExpressionClock? {
            start <= date && date < end && zone == timeZone ? clock : nil
        }
    }

    /// The last local minute ``local(at:timeZone:)`` made a clock for.
    private static let lastLocal = Mutex<LocalMinute?>(nil)
}

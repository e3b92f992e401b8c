import Foundation

/// What a record keeps about itself that its form's expressions and texts may read as `record.<name>`: when it
/// was started and finished, on which device, by whom. A form with a field of its own named `record` reads that
/// field instead; XLSForm's metadata rows (`start`, `end`, `today`, `deviceid`, `username`) are read this way.
public struct RecordMetadata: Sendable, Hashable {
    /// When the record was started, local `YYYY-MM-DDTHH:MM`; nil when not known.
    public var start: String?
    /// When the record was completed, local `YYYY-MM-DDTHH:MM`; nil while it is being filled.
    public var end: String?
    /// The id of the device the record was started on.
    public var device: String?
    /// The user who filled the record.
    public var user: String?

    /// The first name of every metadata path: `record.start`.
    public static let prefix = "record"

    /// The names readable after `record.`, with the type each has.
    public static let names: [String: ExpressionType] = [
        "start": .dateTime, "end": .dateTime, "today": .date, "device": .text, "user": .text,
    ]

    /// Nothing known: every `record.<name>` reads null.
    public init(start: String? = nil, end: String? = nil, device: String? = nil, user: String? = nil) {
        self.start = start
        self.end = end
        self.device = device
        self.user = user
    }

    /// The metadata of a record started at `started` (local time in `timeZone`) on `device` by `user`.
    public init(startedAt started: Date, endedAt ended: Date? = nil, device: String?, user: String? = nil, timeZone: TimeZone = .current) {
        self.init(start: ExpressionClock.local(at: started, timeZone: timeZone).now,
                  end: ended.map { ExpressionClock.local(at: $0, timeZone: timeZone).now }, device: device, user: user)
    }

    /// The value of `record.<name>`: null when unknown; `today` is the day the record was started.
    public func value(_ name: String) -> ExpressionValue {
        switch name {
        case "start": return start.map(ExpressionValue.dateTime) ?? .null
        case "end": return end.map(ExpressionValue.dateTime) ?? .null
        case "today": return start.map { .date(String($0.prefix(10))) } ?? .null
        case "device": return device.map(ExpressionValue.string) ?? .null
        case "user": return user.map(ExpressionValue.string) ?? .null
        default: return .null
        }
    }
}

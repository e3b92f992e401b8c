import FormModel
import SyncCore

/// One field of a stored record: the current value with its sync base and the metadata of its last change.
///
/// Stored inside the record's `fields` JSON column under short keys (`v`, `b`, `r`, `h`, `d`), so the
/// whole record is one row.
public struct FieldEntry: Codable, Sendable, Hashable {
    /// The current answer; nil when the field is unanswered.
    public var value: AnswerValue?
    /// The answer as the server last had it (the base of a three-way merge); nil when never synced.
    public var baseValue: AnswerValue?
    /// The record revision `baseValue` belongs to; 0 when never synced.
    public var baseRevision: Int64
    /// The hybrid logical clock reading of the last change.
    public var clock: HybridTimestamp
    /// The device that made the last change.
    public var device: String?

    public init(value: AnswerValue?, baseValue: AnswerValue? = nil, baseRevision: Int64 = 0, clock: HybridTimestamp = .zero, device: String? = nil) {
        self.value = value
        self.baseValue = baseValue
        self.baseRevision = baseRevision
        self.clock = clock
        self.device = device
    }

    enum CodingKeys: String, CodingKey {
        case value = "v"
        case baseValue = "b"
        case baseRevision = "r"
        case clock = "h"
        case device = "d"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decodeIfPresent(AnswerValue.self, forKey: .value)
        baseValue = try container.decodeIfPresent(AnswerValue.self, forKey: .baseValue)
        baseRevision = try container.decodeIfPresent(Int64.self, forKey: .baseRevision) ?? 0
        clock = try container.decodeIfPresent(HybridTimestamp.self, forKey: .clock) ?? .zero
        device = try container.decodeIfPresent(String.self, forKey: .device)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(value, forKey: .value)
        try container.encodeIfPresent(baseValue, forKey: .baseValue)
        try container.encode(baseRevision, forKey: .baseRevision)
        try container.encode(clock, forKey: .clock)
        try container.encodeIfPresent(device, forKey: .device)
    }
}

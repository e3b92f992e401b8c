import FormModel

/// One field written by a device: the new value, the record revision it was based on and when it was made.
///
/// FieldSheet reads and writes it with the byte codec (`read(from:)`, `write(to:)`). Its `Codable`
/// conformance is kept only because ``Mutation``'s is (for integrators); it writes the same members.
public struct FieldChange: Codable, Sendable, Hashable {
    /// The new answer; `nil` clears the field.
    public var value: AnswerValue?
    /// The record revision the device last saw for this record (0 for a record the device created).
    public var baseRevision: Int64
    /// The device's hybrid logical clock reading when the edit was made.
    public var hlc: HybridTimestamp

    public init(value: AnswerValue?, baseRevision: Int64, hlc: HybridTimestamp) {
        self.value = value
        self.baseRevision = baseRevision
        self.hlc = hlc
    }

    enum CodingKeys: String, CodingKey { case value, baseRevision, hlc }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decodeIfPresent(AnswerValue.self, forKey: .value)
        baseRevision = try container.decode(Int64.self, forKey: .baseRevision)
        hlc = try container.decode(HybridTimestamp.self, forKey: .hlc)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        // A cleared field is written as an explicit null so the wire form says what happened.
        try container.encode(value, forKey: .value)
        try container.encode(baseRevision, forKey: .baseRevision)
        try container.encode(hlc, forKey: .hlc)
    }
}

/// The current value of one field of a stored record, with its stamp: the metadata of the write that set it
/// (the record revision, the hybrid logical clock reading and the device), which the merge needs.
///
/// This is the one stamp type of the protocol: ``RecordFields`` lays the same triple out as `stamp`/`stamps`
/// (`revision`, `clock`, `writer`) in its JSON, a conflict entry as `revision`, `hlc`, `clientId`; in Swift
/// both are a `FieldState`, and ``stamp`` is one without its value.
///
/// FieldSheet reads and writes it with the byte codec (`read(from:)`, `write(to:)`). Its `Codable`
/// conformance is kept only because ``ConflictEntry``'s is (a push response's outcomes carry conflicts).
public struct FieldState: Codable, Sendable, Hashable {
    /// The answer; `nil` when the field was cleared.
    public var value: AnswerValue?
    /// The record revision at which this field last changed.
    public var revision: Int64
    /// The hybrid logical clock reading of the write that set it.
    public var hlc: HybridTimestamp
    /// The device that made that write.
    public var clientID: String

    public init(value: AnswerValue?, revision: Int64, hlc: HybridTimestamp, clientID: String) {
        self.value = value
        self.revision = revision
        self.hlc = hlc
        self.clientID = clientID
    }

    /// The stamp alone: this state with its value left out, so two fields written by the same write compare equal.
    public var stamp: FieldState {
        FieldState(value: nil, revision: revision, hlc: hlc, clientID: clientID)
    }

    enum CodingKeys: String, CodingKey { case value, revision, hlc, clientID = "clientId" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decodeIfPresent(AnswerValue.self, forKey: .value)
        revision = try container.decode(Int64.self, forKey: .revision)
        hlc = try container.decode(HybridTimestamp.self, forKey: .hlc)
        clientID = try container.decode(String.self, forKey: .clientID)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
        try container.encode(revision, forKey: .revision)
        try container.encode(hlc, forKey: .hlc)
        try container.encode(clientID, forKey: .clientID)
    }
}

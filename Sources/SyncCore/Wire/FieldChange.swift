import FormModel

/// One field written by a device: the new value, the record revision it was based on and when it was made.
///
/// Its one codec is the byte codec: ``read(from:)`` / ``init(jsonBytes:)`` and ``write(to:)`` / ``jsonBytes()``
/// (a cleared field is written as an explicit `"value":null`), held to the `FieldChange` schema of
/// `Schema/openapi.yaml` by the wire contract tests.
public struct FieldChange: Sendable, Hashable {
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
}

/// The current value of one field of a stored record, with its stamp: the metadata of the write that set it
/// (the record revision, the hybrid logical clock reading and the device), which the merge needs.
///
/// This is the one stamp type of the protocol: ``RecordFields`` lays the same triple out as `stamp`/`stamps`
/// (`revision`, `clock`, `writer`) in its JSON, a conflict entry as `revision`, `hlc`, `clientId`; in Swift
/// both are a `FieldState`, and ``stamp`` is one without its value.
///
/// Its one codec is the byte codec: ``read(from:)`` / ``init(jsonBytes:)`` and ``write(to:)`` / ``jsonBytes()``,
/// held to the `FieldState` schema of `Schema/openapi.yaml` by the wire contract tests.
public struct FieldState: Sendable, Hashable {
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
}

import FormModel
import Foundation

/// One change to one record made on a device, identified by `(clientId, mutationId)`.
///
/// A device sends the same mutation again (same id, same content) until it sees its outcome;
/// the server applies it once and returns the stored outcome every time after.
///
/// FieldSheet's device and server read and write it with the byte codec only (`read(from:)`, `write(to:)`,
/// `canonicalBytes()`). `Codable` is kept for integrators: a client that builds its push body with its own
/// JSON encoder, and ``PushRequest``'s conformance; `WireContractTests` holds both codecs to the `Mutation`
/// schema of `Schema/openapi.yaml`.
public struct Mutation: Codable, Sendable, Hashable {
    /// Unique per device; a UUID is a good choice.
    public var mutationID: String
    public var recordID: UUID
    /// The form version the record was started on or upgraded to.
    public var form: FormKey
    /// The state the device wants the record in after this mutation.
    public var state: RecordState
    /// The fields written, keyed by field id; fields not named are left as they are.
    public var changes: [String: FieldChange]
    /// The record's times on the device that made the mutation: when it was created there (or first came
    /// there), when the latest change in this mutation was made, and — when the mutation submits it — when it
    /// was submitted. Unknown times are left out; the server then uses its own clock.
    public var times: RecordTimes

    public init(
        mutationID: String, recordID: UUID, form: FormKey, state: RecordState, changes: [String: FieldChange],
        times: RecordTimes = RecordTimes()
    ) {
        self.mutationID = mutationID
        self.recordID = recordID
        self.form = form
        self.state = state
        self.changes = changes
        self.times = times
    }

    private enum CodingKeys: String, CodingKey {
        case mutationID = "mutationId", recordID = "recordId", formID = "formId", formVersion, state, changes, createdAt, updatedAt, submittedAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mutationID = try container.decode(String.self, forKey: .mutationID)
        recordID = try container.decode(UUID.self, forKey: .recordID)
        form = FormKey(id: try container.decode(String.self, forKey: .formID), version: try container.decode(Int.self, forKey: .formVersion))
        state = try container.decode(RecordState.self, forKey: .state)
        changes = try container.decode([String: FieldChange].self, forKey: .changes)
        times = try RecordTimes(from: container)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mutationID, forKey: .mutationID)
        try container.encode(recordID, forKey: .recordID)
        try container.encode(form.id, forKey: .formID)
        try container.encode(form.version, forKey: .formVersion)
        try container.encode(state, forKey: .state)
        try container.encode(changes, forKey: .changes)
        try times.encode(to: &container)
    }
}

import FormModel
import Foundation

/// One change to one record made on a device, identified by `(clientId, mutationId)`.
///
/// A device sends the same mutation again (same id, same content) until it sees its outcome;
/// the server applies it once and returns the stored outcome every time after.
///
/// Its one codec is the byte codec: ``read(from:)`` / ``init(jsonBytes:)`` and ``write(to:uppercaseRecordID:)`` /
/// ``jsonBytes()`` (the canonical form a device sends and signs), held to the `Mutation` schema of
/// `Schema/openapi.yaml` by the wire contract tests. An integrator that builds a push body writes it with
/// ``PushRequest/jsonBytes()`` (or writes the schema's JSON its own way: the server reads any member order).
public struct Mutation: Sendable, Hashable {
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
}

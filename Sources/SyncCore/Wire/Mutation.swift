import FormModel
import Foundation

/// One change to one record made on a device, identified by `(clientId, mutationId)`.
///
/// A device sends the same mutation again (same id, same content) until it sees its outcome;
/// the server applies it once and returns the stored outcome every time after.
public struct Mutation: Codable, Sendable, Hashable {
    /// Unique per device; a UUID is a good choice.
    public var mutationId: String
    public var recordId: UUID
    public var formId: String
    /// The form version the record was started on or upgraded to.
    public var formVersion: Int
    /// The state the device wants the record in after this mutation.
    public var state: RecordState
    /// The fields written, keyed by field id; fields not named are left as they are.
    public var changes: [String: FieldChange]

    public init(mutationId: String, recordId: UUID, formId: String, formVersion: Int, state: RecordState, changes: [String: FieldChange]) {
        self.mutationId = mutationId
        self.recordId = recordId
        self.formId = formId
        self.formVersion = formVersion
        self.state = state
        self.changes = changes
    }
}

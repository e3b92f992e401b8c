import Foundation

/// What became of one mutation. Stored with the mutation, so a retry gets exactly this back.
///
/// Its one codec is the byte codec: ``read(from:)`` / ``init(jsonBytes:)`` and ``write(to:recordIDAsSent:)`` /
/// ``jsonBytes()``, held to the `MutationOutcome` schema of `Schema/openapi.yaml` by the wire contract tests.
public struct MutationOutcome: Sendable, Hashable {
    public enum Status: String, Sendable, CaseIterable {
        /// Every change was applied (or there was nothing to change).
        case applied
        /// Applied, but at least one field was decided against the device or left in an open conflict;
        /// `conflicts` says which.
        case merged
        /// Nothing was applied; `problem` says why. Sending it again gives the same answer.
        case rejected
    }

    public var mutationID: String
    public var recordID: UUID
    public var status: Status
    /// The record's revision after this mutation (absent when rejected).
    public var revision: Int64?
    /// Whether this mutation changed the record, and so made `revision`; false when it changed nothing
    /// (then `revision` may have been made by another writer the device has not seen yet). Absent from
    /// servers that predate it and when rejected: a device then waits for the record's next pull.
    public var changed: Bool?
    /// Every field where both sides had written since the device's base, and how it was decided.
    public var conflicts: [ConflictEntry]
    /// Why the mutation was rejected.
    public var problem: ProblemDetails?

    public init(mutationID: String, recordID: UUID, status: Status, revision: Int64? = nil, conflicts: [ConflictEntry] = [], problem: ProblemDetails? = nil, changed: Bool? = nil) {
        self.mutationID = mutationID
        self.recordID = recordID
        self.status = status
        self.revision = revision
        self.changed = changed
        self.conflicts = conflicts
        self.problem = problem
    }
}

/// An RFC 9457 problem: a stable `type`, a human `title` and `detail`, and the offending field.
///
/// Unlike the push types around it, it stays `Codable`: every error response of the API is one, and clients,
/// FieldSheet's sync client among them, decode those with Foundation's decoder. Inside a push response an
/// outcome's problem is read and written by the byte codec.
public struct ProblemDetails: Codable, Sendable, Hashable {
    public var type: String
    public var title: String
    public var status: Int
    public var detail: String
    /// The field (id or request property) the problem is about, where it applies.
    public var field: String?

    public init(type: String, title: String, status: Int, detail: String, field: String? = nil) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.field = field
    }
}

import FormModel

/// A record's mergeable content: its state, revision and fields.
public struct MergeableRecord: Sendable, Hashable {
    public var state: RecordState
    public var revision: Int64
    public var fields: RecordFields

    public init(state: RecordState, revision: Int64, fields: RecordFields) {
        self.state = state
        self.revision = revision
        self.fields = fields
    }
}

/// Applies one mutation to a record field by field (see ``FieldMerge``) and decides the record's state.
///
/// An edit that reaches a deleted record restores it, and the restoration is logged.
public enum RecordMerge {
    public struct Result: Sendable, Hashable {
        /// The record after the mutation (the same as before when nothing changed).
        public var record: MergeableRecord
        /// Whether anything changed; when false the revision did not move.
        public var changed: Bool
        /// Every conflict log entry the mutation produced, in field-id order.
        public var conflicts: [ConflictEntry]
    }

    /// Merges `mutation` into `current` (nil for a record the server does not have yet).
    /// - Parameters:
    ///   - policy: the conflict policy of a field (`form.conflictPolicy(for:)`).
    ///   - recordPolicy: the form's policy, stamped on record-level log entries.
    public static func merge(
        current: MergeableRecord?, mutation: Mutation, clientId: String,
        recordPolicy: ConflictPolicy, policy: (String) -> ConflictPolicy
    ) -> Result {
        let base = current ?? MergeableRecord(state: mutation.state, revision: 0, fields: RecordFields())
        let revision = base.revision + 1
        var record = base
        var changed = current == nil
        var conflicts: [ConflictEntry] = []
        if let current, current.state == .deleted, mutation.state != .deleted {
            conflicts.append(ConflictEntry(kind: .restoredAfterDelete, fieldId: nil, policy: recordPolicy, winner: .client, server: nil, client: nil))
        }
        for fieldId in mutation.changes.keys.sorted() {
            let change = mutation.changes[fieldId]!
            let result = FieldMerge.merge(
                fieldId: fieldId, server: base.fields[fieldId], change: change, clientId: clientId,
                policy: policy(fieldId), revision: revision)
            if let newState = result.newState {
                record.fields[fieldId] = newState
                changed = true
            }
            if let conflict = result.conflict { conflicts.append(conflict) }
        }
        if record.state != mutation.state {
            record.state = mutation.state
            changed = true
        }
        if changed { record.revision = revision }
        return Result(record: record, changed: changed, conflicts: conflicts)
    }
}

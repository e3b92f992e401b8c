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
/// An edit that reaches a deleted record restores it, and the restoration is logged. Likewise an edit of a field
/// of a repeat instance removed on the server (`defects/<id>/@removed` true) restores the instance (and the
/// instances around it): `@removed` becomes false, stamped with the edit, and the restoration is logged.
public enum RecordMerge {
    public struct Result: Sendable, Hashable {
        /// The record after the mutation (the same as before when nothing changed).
        public var record: MergeableRecord
        /// Whether anything changed; when false the revision did not move.
        public var changed: Bool
        /// Every conflict log entry the mutation produced, in field-id order.
        public var conflicts: [ConflictEntry]
        /// The fields the mutation's changes set (their value changed), in field-id order; not the repeat
        /// instances it restored.
        public var changedFields: [String] = []
    }

    /// Merges `mutation` into `current` (nil for a record the server does not have yet).
    /// - Parameters:
    ///   - policy: the conflict policy of a field (`form.conflictPolicy(for:)`).
    ///   - recordPolicy: the form's policy, stamped on record-level log entries.
    public static func merge(
        current: MergeableRecord?, mutation: Mutation, clientID: String,
        recordPolicy: ConflictPolicy, policy: (String) -> ConflictPolicy
    ) -> Result {
        let base = current ?? MergeableRecord(state: mutation.state, revision: 0, fields: RecordFields())
        let revision = base.revision + 1
        var record = base
        var changed = current == nil
        var conflicts: [ConflictEntry] = []
        var changedFields: [String] = []
        record.fields.states.reserveCapacity(base.fields.count + mutation.changes.count)
        if let current, current.state == .deleted, mutation.state != .deleted {
            conflicts.append(ConflictEntry(kind: .restoredAfterDelete, fieldID: nil, policy: recordPolicy, winner: .client, server: nil, client: nil))
        }
        for (fieldID, change) in mutation.changes.sorted(by: { $0.key < $1.key }) {
            let result = FieldMerge.merge(
                fieldID: fieldID, server: base.fields[fieldID], change: change, clientID: clientID,
                policy: policy(fieldID), revision: revision)
            if let newState = result.newState {
                record.fields[fieldID] = newState
                changedFields.append(fieldID)
                changed = true
            }
            if let conflict = result.conflict { conflicts.append(conflict) }
        }
        for (prefix, hlc) in restoredInstances(mutation: mutation, record: record) {
            let key = prefix + "/" + AnswerKey.removed
            conflicts.append(ConflictEntry(kind: .restoredAfterDelete, fieldID: key, policy: policy(key), winner: .client, server: record.fields[key], client: nil))
            record.fields[key] = FieldState(value: .boolean(false), revision: revision, hlc: hlc, clientID: clientID)
            changed = true
        }
        if record.state != mutation.state {
            record.state = mutation.state
            changed = true
        }
        if changed { record.revision = revision }
        return Result(record: record, changed: changed, conflicts: conflicts, changedFields: changedFields)
    }

    /// The removed instances that the mutation's applied edits lie in, with the clock of the latest such edit;
    /// none when the mutation itself writes the instance's `@removed`.
    static func restoredInstances(mutation: Mutation, record: MergeableRecord) -> [(String, HybridTimestamp)] {
        var found: [String: HybridTimestamp] = [:]
        for (key, change) in mutation.changes where key.utf8.contains(UInt8(ascii: "/")) && change.value != nil {
            guard let path = AnswerKey(key), !path.isInstanceMeta else { continue }
            var prefix = ""
            for step in path.steps {
                prefix = AnswerKey.key(step.group, in: prefix) + "/" + step.instance
                let removedKey = prefix + "/" + AnswerKey.removed
                guard mutation.changes[removedKey] == nil, record.fields[removedKey]?.value == .boolean(true),
                      record.fields[key]?.value == change.value else { continue }
                found[prefix] = max(found[prefix] ?? change.hlc, change.hlc)
            }
        }
        return found.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

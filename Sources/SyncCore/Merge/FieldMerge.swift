import FormModel

/// The field-level three-way merge: the server's current field, the device's change and the base it
/// was made on decide what the field holds afterwards.
///
/// Rules, in order:
/// 1. the device wrote what the server already holds → nothing to do;
/// 2. the server's field has not changed since the device's base revision (or never existed) → apply;
/// 3. otherwise both sides changed it: the policy decides, and the losing value goes to the conflict log.
///
/// A field only one side touched never reaches rule 3: the device does not send fields it did not
/// write, and a field the server did not change since the base is applied by rule 2.
public enum FieldMerge {
    /// What to do with one field.
    public struct Result: Sendable, Hashable {
        /// The field's new state, or `nil` when the server's value stays as it is.
        public var newState: FieldState?
        /// The conflict log entry, when both sides had changed the field.
        public var conflict: ConflictEntry?
    }

    /// Merges one field change.
    /// - Parameters:
    ///   - fieldId: the field.
    ///   - server: the field as the server holds it, or nil when the record has no value for it.
    ///   - change: the device's change.
    ///   - clientId: the device that made it.
    ///   - policy: the field's conflict policy (`form.conflictPolicy(for:)`), asked for only when both sides
    ///     changed the field (a new record's fields never need it).
    ///   - revision: the record revision this merge produces, stamped on an applied value.
    public static func merge(
        fieldID: String, server: FieldState?, change: FieldChange, clientID: String,
        policy: @autoclosure () -> ConflictPolicy, revision: Int64
    ) -> Result {
        let incoming = FieldState(value: change.value, revision: revision, hlc: change.hlc, clientID: clientID)
        guard let server else {
            // Clearing a field that holds nothing changes nothing.
            return Result(newState: change.value == nil ? nil : incoming, conflict: nil)
        }
        if server.value == change.value {
            return Result(newState: nil, conflict: nil)
        }
        if server.revision <= change.baseRevision {
            return Result(newState: incoming, conflict: nil)
        }
        let clientSide = FieldState(value: change.value, revision: change.baseRevision, hlc: change.hlc, clientID: clientID)
        let policy = policy()
        switch policy {
        case .lastWriterWins:
            let clientLater = (change.hlc, clientID) > (server.hlc, server.clientID)
            return Result(
                newState: clientLater ? incoming : nil,
                conflict: ConflictEntry(fieldID: fieldID, policy: policy, winner: clientLater ? .client : .server, server: server, client: clientSide))
        case .serverWins:
            return Result(newState: nil, conflict: ConflictEntry(fieldID: fieldID, policy: policy, winner: .server, server: server, client: clientSide))
        case .clientWins:
            return Result(newState: incoming, conflict: ConflictEntry(fieldID: fieldID, policy: policy, winner: .client, server: server, client: clientSide))
        case .manual:
            return Result(newState: nil, conflict: ConflictEntry(fieldID: fieldID, policy: policy, winner: .server, open: true, server: server, client: clientSide))
        }
    }
}

import FormModel

/// Answers by field id where `nil` means "cleared": a device's pending local edits (kept beside the
/// record's ``RecordFields``, which hold what the server last said), and answers as a presentation saw them.
public typealias FieldValues = [String: AnswerValue?]

/// The device half of the sync protocol, as pure functions: what the device database stores is decided
/// here, and DraftStore only reads and writes the rows.
///
/// A device keeps, per record, the server's ``RecordFields`` as last pulled or acknowledged (the sync base)
/// and beside them its pending local edits (``FieldValues``). What a person sees is the base overlaid by the
/// edits. A pull replaces the base and leaves the edits on top; a push sends the edits; its outcome moves
/// each acknowledged edit into the base.
public enum DeviceSync {
    /// What a person sees: the synced values overlaid by the pending edits.
    public static func answers(synced: RecordFields, local: FieldValues) -> [String: AnswerValue] {
        var answers = synced.values
        for (field, value) in local {
            answers[field] = value ?? nil
        }
        return answers
    }

    /// The base revision of a new edit of a field: the server revision the device holds, unless the field
    /// already has an unsent (or unacknowledged) edit. Then the person has been looking at their own value,
    /// not at what later pulls brought beneath it, and the new edit continues that one: it keeps its base,
    /// so a value another device wrote meanwhile meets it as a conflict instead of being overwritten unseen.
    public static func editBase(pendingBase: Int64?, serverRevision: Int64) -> Int64 {
        pendingBase.map { min($0, serverRevision) } ?? serverRevision
    }

    /// One outbox row, as far as coalescing needs it.
    public struct OutboxEntry: Sendable, Hashable {
        /// The fields the row wrote (one for a `set`, every defaulted field for a `create`, none for a state change).
        public var fields: [String]
        public var baseRevision: Int64
        public var hlc: HybridTimestamp

        public init(fields: [String], baseRevision: Int64, hlc: HybridTimestamp) {
            self.fields = fields
            self.baseRevision = baseRevision
            self.hlc = hlc
        }
    }

    /// A record's pending outbox rows as one mutation's changes: every field they touched with the value it
    /// holds now, the oldest base revision among those rows (so the server sees every change made since the
    /// device last saw the field) and the newest clock reading. A deleted record sends no field changes.
    public static func coalesce(_ entries: [OutboxEntry], answers: [String: AnswerValue], state: RecordState) -> [String: FieldChange] {
        guard state != .deleted else { return [:] }
        // One change per field, made when a row first names it; a later row lowers its base and moves its clock.
        var changes: [String: FieldChange] = [:]
        changes.reserveCapacity(entries.reduce(0) { $0 + $1.fields.count })
        for entry in entries {
            for field in entry.fields {
                if let known = changes.index(forKey: field) {
                    changes.values[known].baseRevision = min(changes.values[known].baseRevision, entry.baseRevision)
                    changes.values[known].hlc = max(changes.values[known].hlc, entry.hlc)
                } else {
                    changes[field] = FieldChange(value: answers[field], baseRevision: entry.baseRevision, hlc: entry.hlc)
                }
            }
        }
        return changes
    }

    /// A conflict the device logs for a person to see (and, when `open`, decide).
    public struct LoggedConflict: Sendable, Hashable {
        public var field: String
        /// The conflict policy that decided, or `rejected` when the server refused the mutation.
        public var policy: String
        public var local: FieldState?
        public var remote: FieldState?
        public var open: Bool
        /// Why the server refused the change (policy `rejected`): its problem's detail, else its title.
        public var reason: String? = nil
    }

    /// The record after the server's outcome of one of its mutations.
    public struct OutcomeResult: Sendable, Hashable {
        public var synced: RecordFields
        /// The fields whose unsent edits the outcome settles (sent, and not edited again since), in key order:
        /// their edits leave the device; the record's other unsent edits stay as they are.
        public var settled: [String] = []
        public var serverRevision: Int64
        public var conflicts: [LoggedConflict]
        /// Fields edited again while the mutation was in flight, with the revision their pending outbox rows
        /// are now based on (at least): they were edited on top of this mutation's value, which the server
        /// holds at that revision, so that is their base, not a conflict with themselves. (Where the server's
        /// value won, the new edit was made without seeing it: its base stays, and it meets it as a conflict.)
        public var rebasedEdits: [String: Int64] = [:]
    }

    /// Applies the outcome of `mutation` to a record.
    /// - Parameters:
    ///   - editedSince: fields with outbox rows newer than the mutation (edited again while it was in
    ///     flight): they keep their newer local value, based on what the server now holds.
    ///   - device: this device's id, the writer of every applied change.
    public static func applyOutcome(
        _ outcome: MutationOutcome, of mutation: Mutation, synced: RecordFields,
        serverRevision: Int64, editedSince: Set<String>, device: String
    ) -> OutcomeResult {
        var result = OutcomeResult(synced: synced, serverRevision: serverRevision, conflicts: [])
        if outcome.status == .rejected {
            // Nothing was applied: the field goes back to the server's value and what was typed is logged.
            for field in mutation.changes.keys.sorted() where !editedSince.contains(field) {
                let change = mutation.changes[field]!
                let base = synced[field]?.value
                result.conflicts.append(LoggedConflict(
                    field: field, policy: "rejected",
                    local: FieldState(value: change.value, revision: change.baseRevision, hlc: change.hlc, clientID: device),
                    remote: base.map { FieldState(value: $0, revision: serverRevision, hlc: .zero, clientID: "server") }, open: false,
                    reason: outcome.problem.map { $0.detail.isEmpty ? $0.title : $0.detail }))
                result.settled.append(field)
            }
            return result
        }
        let revision = outcome.revision ?? serverRevision
        // A pull since the push (after a lost response) already brought this revision or a later one: the
        // synced fields say what the server made of the mutation and of anything written after it.
        let alreadyPulled = revision <= serverRevision
        var lost: [String: ConflictEntry] = [:]
        for entry in outcome.conflicts where entry.kind == .field {
            if let field = entry.fieldID, lost[field] == nil { lost[field] = entry }
        }
        for (field, change) in mutation.changes.sorted(by: { $0.key < $1.key }) {
            let serverWon = lost[field]?.winner == .server
            if !alreadyPulled {
                var winner = FieldState(value: change.value, revision: revision, hlc: change.hlc, clientID: device)
                if serverWon, let server = lost[field]?.server { winner = server }
                result.synced[field] = winner
            }
            if editedSince.contains(field) {
                // Edited again on top of this mutation's own value: that value is the edit's base. When the
                // server's value won instead, the edit was made without seeing it, and stays a conflict.
                if !serverWon { result.rebasedEdits[field] = revision }
            } else {
                result.settled.append(field)
            }
        }
        if !alreadyPulled {
            // The server restored the removed instances this mutation edited (`RecordMerge`); the device's copy
            // of the record at this revision says so too, or the next pull (which skips this revision) never would.
            let merged = MergeableRecord(state: mutation.state, revision: revision, fields: result.synced)
            for (prefix, hlc) in RecordMerge.restoredInstances(mutation: mutation, record: merged) {
                result.synced[prefix + "/" + AnswerKey.removed] = FieldState(value: .boolean(false), revision: revision, hlc: hlc, clientID: device)
            }
        }
        for entry in outcome.conflicts where entry.kind == .field {
            guard let field = entry.fieldID else { continue }
            // Where the server's value won, this device's value was replaced without its person deciding it:
            // the entry stays open, as one a pull delivers to a device whose value lost (`LostConflict`), so
            // the record is marked wherever a value lost. Where this device's value won, the entry records the
            // other writer's loss and is only for reading (unless the policy leaves it open for a person).
            result.conflicts.append(LoggedConflict(
                field: field, policy: entry.policy.rawValue, local: entry.client, remote: entry.server,
                open: entry.open || entry.winner == .server))
        }
        // The device holds the record at this revision only when this mutation made it (it changed the
        // record) right after the revision the device held. A mutation that changed nothing may come back
        // with a revision another device made; a later revision means others wrote in between. Either
        // way the next pull brings the record and its revision.
        if outcome.changed == true, revision == serverRevision + 1 { result.serverRevision = revision }
        return result
    }
}

// MARK: Bytes of field values

extension JSONWriter {
    /// Writes field values as an object of answers (`null` for cleared), keys sorted.
    public mutating func fieldValues(_ values: FieldValues) {
        beginObject()
        for field in values.keys.sorted() {
            key(field)
            values[field]!.write(to: &self)
        }
        endObject()
    }
}

extension JSONReader {
    /// Reads an object of answers (`null` for cleared).
    public mutating func fieldValues() throws -> FieldValues {
        var values: FieldValues = [:]
        try beginObject()
        while let field = try nextKey() {
            values[field] = .some(try AnswerValue.readOptional(from: &self))
        }
        return values
    }
}

extension RecordFields {
    /// Only the values of stored record fields, skipping the metadata (opening a sheet needs no more).
    public static func values(jsonBytes bytes: [UInt8]) throws -> FieldValues {
        var reader = JSONReader(bytes)
        var values: FieldValues = [:]
        try reader.beginObject()
        while let key = try reader.nextKey() {
            if key == "values" { values = try reader.fieldValues() } else { try reader.skipValue() }
        }
        return values
    }
}

/// Field values encoded as JSON text, for storing.
public func fieldValuesJSON(_ values: FieldValues) -> String {
    var writer = JSONWriter(capacity: 32 + 40 * values.count)
    writer.fieldValues(values)
    return String(decoding: writer.bytes, as: UTF8.self)
}

/// Field values read from stored JSON text.
public func fieldValues(json: String) throws -> FieldValues {
    var reader = JSONReader(Array(json.utf8))
    let values = try reader.fieldValues()
    try reader.finish()
    return values
}

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
        var bases: [String: Int64] = [:]
        var clocks: [String: HybridTimestamp] = [:]
        for entry in entries {
            for field in entry.fields {
                bases[field] = min(bases[field] ?? entry.baseRevision, entry.baseRevision)
                clocks[field] = max(clocks[field] ?? entry.hlc, entry.hlc)
            }
        }
        var changes: [String: FieldChange] = [:]
        for (field, base) in bases {
            changes[field] = FieldChange(value: answers[field], baseRevision: base, hlc: clocks[field] ?? .zero)
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
    }

    /// The record after the server's outcome of one of its mutations.
    public struct OutcomeResult: Sendable, Hashable {
        public var synced: RecordFields
        public var local: FieldValues
        public var serverRevision: Int64
        public var conflicts: [LoggedConflict]
    }

    /// Applies the outcome of `mutation` to a record.
    /// - Parameters:
    ///   - editedSince: fields with outbox rows newer than the mutation (edited again while it was in
    ///     flight): they keep their newer local value, based on what the server now holds.
    ///   - device: this device's id, the writer of every applied change.
    public static func applyOutcome(
        _ outcome: MutationOutcome, of mutation: Mutation, synced: RecordFields, local: FieldValues,
        serverRevision: Int64, editedSince: Set<String>, device: String
    ) -> OutcomeResult {
        var result = OutcomeResult(synced: synced, local: local, serverRevision: serverRevision, conflicts: [])
        if outcome.status == .rejected {
            // Nothing was applied: the field goes back to the server's value and what was typed is logged.
            for field in mutation.changes.keys.sorted() where !editedSince.contains(field) {
                let change = mutation.changes[field]!
                let base = synced[field]?.value
                result.conflicts.append(LoggedConflict(
                    field: field, policy: "rejected",
                    local: FieldState(value: change.value, revision: change.baseRevision, hlc: change.hlc, clientId: device),
                    remote: base.map { FieldState(value: $0, revision: serverRevision, hlc: .zero, clientId: "server") }, open: false))
                result.local[field] = nil
            }
            return result
        }
        let revision = outcome.revision ?? serverRevision
        var lost: [String: ConflictEntry] = [:]
        for entry in outcome.conflicts where entry.kind == .field {
            if let field = entry.fieldId, lost[field] == nil { lost[field] = entry }
        }
        for field in mutation.changes.keys.sorted() {
            let change = mutation.changes[field]!
            var winner = FieldState(value: change.value, revision: revision, hlc: change.hlc, clientId: device)
            if let entry = lost[field], entry.winner == .server, let server = entry.server { winner = server }
            result.synced[field] = winner
            if !editedSince.contains(field) { result.local[field] = nil }
        }
        for entry in outcome.conflicts where entry.kind == .field {
            guard let field = entry.fieldId else { continue }
            result.conflicts.append(LoggedConflict(field: field, policy: entry.policy.rawValue, local: entry.client, remote: entry.server, open: entry.open))
        }
        // Only when nothing else happened to the record in between does this revision describe what the
        // device holds; otherwise the next pull brings the record and its revision.
        if revision <= serverRevision + 1 { result.serverRevision = max(serverRevision, revision) }
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

import Foundation
import FormModel
import GRDB
package import SyncCore

/// One entry of the device's conflict log: both values of a field and who wrote them.
public struct StoredConflict: Sendable, Hashable {
    /// The entry's number in the device's log.
    public var id: Int64
    /// The record the field belongs to.
    public var recordID: UUID
    /// The field both sides wrote (a path inside a repeat instance).
    public var fieldID: String
    /// The policy that decided (`lastWriterWins`, `serverWins`, `clientWins`, `manual`), or `rejected`
    /// when the server refused the change.
    public var policy: String
    /// This device's value, its clock reading and device.
    public var mine: AnswerValue?
    /// The hybrid clock reading of this device's write.
    package var mineClock: HybridTimestamp?
    /// The device that wrote `mine`.
    public var mineDevice: String?
    /// The server's value (written by another device or person), its clock reading and device.
    public var theirs: AnswerValue?
    /// The hybrid clock reading of the server's write.
    package var theirsClock: HybridTimestamp?
    /// The device that wrote `theirs`.
    public var theirsDevice: String?
    /// When this device learned of the conflict.
    public var detectedAt: Date
    /// Nil while a person still has to decide.
    public var resolvedAt: Date?
    /// Why the server refused the change, for policy `rejected`: what was wrong and what to do, as the server
    /// wrote it.
    public var reason: String? = nil

    /// Whether a person still has to decide.
    public var isOpen: Bool { resolvedAt == nil }
}

/// How a person settles a conflict.
public enum ConflictChoice: Sendable, Hashable {
    /// Keep this device's value.
    case mine
    /// Keep the server's value.
    case theirs
    /// Keep a value the person typed (nil clears the field).
    case value(AnswerValue?)
}

extension DraftStore {
    /// The conflict log, oldest first; only conflicts waiting for a person when `openOnly`, only those of
    /// `record` when given, and only those this device learned of at `detectedSince` or later when given (what
    /// one sync logged).
    public func conflicts(openOnly: Bool = false, record: UUID? = nil, detectedSince: Date? = nil) async throws -> [StoredConflict] {
        try await read(doing: "listing conflicts") { db in
            try Self.fetchConflicts(db, openOnly: openOnly, record: record, detectedSince: detectedSince)
        }
    }

    static func fetchConflicts(_ db: Database, openOnly: Bool, record: UUID?, detectedSince: Date? = nil) throws -> [StoredConflict] {
        var sql = "SELECT \(conflictColumns) FROM conflicts WHERE 1 = 1"
        var arguments: StatementArguments = []
        if openOnly { sql += " AND resolved_at IS NULL" }
        if let record {
            sql += " AND record_id = ?"
            arguments += [record.lowercased]
        }
        if let detectedSince {
            sql += " AND detected_at >= ?"
            arguments += [Int64((detectedSince.timeIntervalSince1970 * 1000).rounded(.down))]
        }
        return try Row.fetchAll(db, sql: sql + " ORDER BY id", arguments: arguments).map(Self.conflict(from:))
    }

    /// The columns of a conflict row, its values opened.
    static let conflictColumns = """
        id, record_id, field_id, policy, fs_open(local_value, 'conflict', record_id, field_id, 'local') AS local_value, local_hlc, local_device,
        fs_open(remote_value, 'conflict', record_id, field_id, 'remote') AS remote_value, remote_hlc, remote_device, detected_at, resolved_at,
        fs_open(reason, 'conflict', record_id, field_id, 'reason') AS reason, server_id
        """

    static func conflict(from row: Row) throws -> StoredConflict {
        func value(_ json: String?) -> AnswerValue? {
            json.flatMap { try? JSONDecoder().decode(AnswerValue.self, from: Data($0.utf8)) }
        }
        return StoredConflict(
            id: row["id"], recordID: UUID(text: row["record_id"]) ?? UUID(), fieldID: row["field_id"], policy: row["policy"],
            mine: value(row["local_value"]), mineClock: (row["local_hlc"] as Int64?).map(HybridTimestamp.init(rawValue:)), mineDevice: row["local_device"],
            theirs: value(row["remote_value"]), theirsClock: (row["remote_hlc"] as Int64?).map(HybridTimestamp.init(rawValue:)), theirsDevice: row["remote_device"],
            detectedAt: date(row["detected_at"]), resolvedAt: (row["resolved_at"] as Int64?).map(date), reason: row["reason"])
    }

    /// Settles the open conflict of `field` in `record`: the chosen value is written as an ordinary edit
    /// (queued for sync like any other) and the conflict is marked resolved, in one transaction.
    /// - Returns: the value the field now holds.
    /// - Throws: `unknownRecord`, `unknownField`, `noOpenConflict`, `wrongType`.
    @discardableResult
    public func resolveConflict(record: UUID, field: String, choice: ConflictChoice) async throws -> AnswerValue? {
        let key = record.lowercased
        guard let stored = try await self.record(record), stored.state != .deleted else {
            throw DraftStoreError(.unknownRecord, "There is no record \(key) on this device. List conflicts with `fieldsheet conflicts`.")
        }
        let form = try await form(stored.form)
        guard let definition = form.field(field), definition.kind.takesAnswer else {
            throw DraftStoreError(.unknownField, "The form \(form.id) has no field \"\(field)\" that takes an answer.")
        }
        return try await write(doing: "resolving the conflict of \"\(field)\" in record \(key)") { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.conflictColumns) FROM conflicts WHERE record_id = ? AND field_id = ? AND resolved_at IS NULL ORDER BY id DESC LIMIT 1", arguments: [key, field]) else {
                throw DraftStoreError(.noOpenConflict, "Record \(key) has no open conflict on \"\(field)\". List them with `fieldsheet conflicts`.")
            }
            let conflict = try Self.conflict(from: row)
            let chosen: AnswerValue?
            switch choice {
            case .mine: chosen = conflict.mine
            case .theirs: chosen = conflict.theirs
            case .value(let value): chosen = value
            }
            if let chosen, !chosen.fits(definition.kind) {
                throw DraftStoreError(.wrongType, "The field \"\(field)\" (\(definition.label)) cannot take a \(chosen.tag) answer (\"\(chosen.display())\"). \(FieldValidator.formatMessage(for: definition))")
            }
            let now = Self.nowMillis()
            try db.execute(sql: "UPDATE conflicts SET resolved_at = ? WHERE record_id = ? AND field_id = ? AND resolved_at IS NULL", arguments: [now, key, field])
            guard let current = try Self.fetchRecord(db, id: record), current.answers[field] != chosen else { return chosen }
            let (clock, _) = try Self.tick(db)
            let json = chosen.map { Self.answerJSON($0) }
            guard let serverRevision = try Int64.fetchOne(db, sql: "UPDATE records SET updated_at = ? WHERE id = ? RETURNING server_revision", arguments: [now, key])
            else { return chosen }
            try Self.setEdit(db, record: key, key: field, json: json)
            let baseRevision = try Self.editBase(db, record: key, field: field, serverRevision: serverRevision)
            try db.execute(sql: """
                INSERT INTO outbox (record_id, kind, field_id, value, base_revision, hlc, created_at) VALUES (?1, 'set', ?2, fs_seal(?3, 'outbox', ?1, ?2), ?4, ?5, ?6)
                """, arguments: [key, field, json, baseRevision, clock.rawValue, now])
            return chosen
        }
    }
}

import Foundation
import FormModel
import GRDB
public import SyncCore

/// Sensitive fields on the device (docs/sensitive-fields.md): each answer of a field marked `sensitive` is
/// sealed to the project's public key when its change is frozen for sending, so it never leaves the device in
/// clear. The device keeps what it sealed (`sealed_plaintexts`, itself sealed with the device data key like every
/// value the store holds) and shows it in place of the ciphertext when
/// the server sends that ciphertext back; another device's sealed answer stays sealed here.
extension DraftStore {
    /// The project's current key for sensitive fields, as last received with the forms; nil when the server
    /// has sent none.
    public func projectKey() async throws -> ProjectPublicKey? {
        try await read(doing: "reading the project key") { db in
            try Row.fetchOne(db, sql: "SELECT key_id, public_key FROM project_key WHERE id = 1").map { ProjectPublicKey(id: $0[0], publicKey: $0[1]) }
        }
    }

    /// Stores the project's current key as the server sent it with the forms (nil: the project has none).
    package func storeProjectKey(_ key: ProjectPublicKey?) async throws {
        try await write(doing: "storing the project key") { db in
            if let key {
                try db.execute(sql: """
                    INSERT INTO project_key (id, key_id, public_key) VALUES (1, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET key_id = excluded.key_id, public_key = excluded.public_key
                    """, arguments: [key.id, key.publicKey])
            } else {
                try db.execute(sql: "DELETE FROM project_key")
            }
        }
    }

    /// Seals every answer of a sensitive field that `mutation` sets, in place, to the stored project key, and
    /// remembers each plaintext with its ciphertext. `sensitive` keeps each form version's sensitive field ids
    /// across the calls of one batch, so a form without sensitive fields costs one dictionary lookup per record.
    static func sealSensitiveAnswers(_ db: Database, _ mutation: inout Mutation, cache: FormCache, sensitive: inout [FormKey: Set<String>]) throws {
        let formKey = mutation.form
        let form = try loadForm(db, id: mutation.form.id, version: mutation.form.version, cache: cache)
        if sensitive[formKey] == nil {
            sensitive[formKey] = Set(form.everyField.filter(\.sensitive).map(\.id))
        }
        guard let ids = sensitive[formKey], !ids.isEmpty else { return }
        func isSensitive(_ key: String) -> Bool {
            guard let path = AnswerKey(key), !path.isInstanceMeta else { return false }
            return ids.contains(path.field)
        }
        let keys = mutation.changes.keys.filter(isSensitive).sorted()
        guard !keys.isEmpty else { return }
        let record = mutation.recordID.lowercased
        var stored: ProjectPublicKey?
        for key in keys {
            guard let value = mutation.changes[key]?.value else {
                try db.execute(sql: "DELETE FROM sealed_plaintexts WHERE record_id = ? AND key = ?", arguments: [record, key])
                continue
            }
            if case .sealed = value { continue }
            if stored == nil {
                stored = try Row.fetchOne(db, sql: "SELECT key_id, public_key FROM project_key WHERE id = 1").map { ProjectPublicKey(id: $0[0], publicKey: $0[1]) }
            }
            guard let projectKey = stored else {
                throw DraftStoreError(.noProjectKey, "The form \(form.id) has sensitive fields (\(key)), which are sealed to the project's key before they are sent, but this device has no key for the project. The record's changes stay on this device; ask the project's admin to run `fieldsheet-server project key create`, then sync again.")
            }
            let sealed: SealedAnswer
            do {
                sealed = try AnswerSealing.seal(value, to: projectKey, record: record, path: key)
            } catch {
                throw DraftStoreError(.noProjectKey, "The sensitive answer \(key) could not be sealed: \(error). Your changes stay on this device; sync again to fetch the project's key.")
            }
            mutation.changes[key]?.value = .sealed(sealed)
            try db.execute(sql: """
                INSERT INTO sealed_plaintexts (record_id, key, ct, value) VALUES (?1, ?2, ?3, fs_seal(?4, 'sensitive', ?1, ?2))
                ON CONFLICT (record_id, key) DO UPDATE SET ct = excluded.ct, value = excluded.value
                """, arguments: [record, key, sealed.ct, answerJSON(value)])
        }
    }

    /// Puts this device's own plaintext back in place of the sealed answers of `record`'s synced fields whose
    /// ciphertext it made itself (after an outcome or a pull wrote the server's sealed copy).
    static func restoreSealedPlaintexts(_ db: Database, record: String) throws {
        let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT key, ct, fs_open(value, 'sensitive', record_id, key) FROM sealed_plaintexts WHERE record_id = ?"), arguments: [record])
        guard !rows.isEmpty, let json = try String.fetchOne(db.cachedStatement(sql: "SELECT fs_open_fields(fields, 'record', id) FROM records WHERE id = ?"), arguments: [record]) else { return }
        var fields = try decodeSynced(json, record: record)
        var changed = false
        for row in rows {
            let key: String = row[0]
            guard case .sealed(let sealed)? = fields.states[key]?.value, sealed.ct == row[1] as String else { continue }
            var reader = JSONReader(Array((row[2] as String).utf8))
            fields.states[key]?.value = try AnswerValue.read(from: &reader)
            changed = true
        }
        guard changed else { return }
        try db.cachedStatement(sql: "UPDATE records SET fields = fs_seal_fields(?1, 'record', ?2) WHERE id = ?2").execute(arguments: [String(decoding: fields.jsonBytes(), as: UTF8.self), record])
    }

    /// `state` with this device's own plaintext in place of a sealed answer the device made itself, so that a
    /// conflict entry (a refusal, or the server's value winning) shows the person what they typed and a choice of
    /// "mine" sends it again; an answer another device sealed stays sealed.
    static func ownPlaintext(_ db: Database, record: String, key: String, _ state: FieldState?) throws -> FieldState? {
        guard var state, case .sealed(let sealed)? = state.value else { return state }
        guard let json = try String.fetchOne(db.cachedStatement(sql: """
            SELECT fs_open(value, 'sensitive', record_id, key) FROM sealed_plaintexts WHERE record_id = ? AND key = ? AND ct = ?
            """), arguments: [record, key, sealed.ct]) else { return state }
        var reader = JSONReader(Array(json.utf8))
        state.value = try AnswerValue.read(from: &reader)
        return state
    }

    /// Whether this device holds the plaintext of any answer it sealed (so pulled records may need it back).
    static func holdsSealedPlaintexts(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sealed_plaintexts)") ?? false
    }
}

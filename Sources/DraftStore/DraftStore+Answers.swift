import Foundation
import FormModel
import GRDB
internal import SyncCore

extension DraftStore {
    /// A record's stored fields (`records.fields`, opened) and its unsent edits as one JSON object (`{"site":
    /// {"text": "Pump 4"}, "notes": null}`), as text: what a presentation's snapshot keeps.
    typealias StoredAnswers = (fields: String, local: String)

    /// What ``fetchStoredAnswers(_:record:encryption:)`` reads: the stored answers as text, and the record's
    /// current answers read from them (the synced values overlaid by the unsent edits).
    struct ReadAnswers {
        var stored: StoredAnswers
        var answers: [String: AnswerValue]
    }

    /// The stored fields and unsent edits of a record (both `{}`-like when it has none; a record that does not
    /// exist has neither), and its current answers.
    ///
    /// The unsent edits (10,000 rows for a record of 5,000 repeat instances) are read as stored and opened
    /// here with the store's cipher (`encryption`), each value's bytes read once: into the answers, and copied
    /// as they are into the JSON object of the edits. No SQL function is called per value and SQLite builds no
    /// JSON object to be parsed again.
    static func fetchStoredAnswers(_ db: Database, record: String, encryption: StoreEncryption.State) throws -> ReadAnswers {
        guard let fields = try String.fetchOne(db.cachedStatement(sql: "SELECT fs_open_fields(fields, 'record', id) FROM records WHERE id = ?"), arguments: [record]) else {
            return ReadAnswers(stored: (emptyFields, "{}"), answers: [:])
        }
        var answers: [String: AnswerValue] = [:]
        do {
            for (field, value) in try RecordFields.values(jsonBytes: Array(fields.utf8)) {
                if let value { answers[field] = value }
            }
        } catch {
            throw DraftStoreError(.databaseDamaged, "The stored answers of record \(record) cannot be read (\(error)).")
        }
        // An edit's place is `edit`, the record and its key (StoreEncryption's `fs_seal(value, 'edit', record_id, key)`).
        let placePrefix = DeviceCipher.place(["edit", record, ""])
        var place = placePrefix
        var local = JSONWriter(capacity: 256)
        local.beginObject()
        let edits = try Row.fetchCursor(db.cachedStatement(sql: "SELECT key, value FROM record_edits WHERE record_id = ? ORDER BY key"), arguments: [record])
        while let row = try edits.next() {
            let key: String = row[0]
            let json: [UInt8]
            switch (row[1] as DatabaseValue).storage {
            case .null:
                json = Array("null".utf8)
            case .blob(let sealed):
                guard let cipher = encryption.cipher else {
                    throw DraftStoreError(.deviceKeyUnusable, "The device database holds encrypted values and was opened without its key.")
                }
                place.removeLast(place.count - placePrefix.count)
                place.append(contentsOf: key.utf8)
                guard let plaintext = cipher.open(Array(sealed), place: place) else {
                    throw DraftStoreError(.databaseDamaged, "A stored value (edit \(record) \(key)) does not open with the device key: it was altered or moved."
                        + " Restore the database from a backup, or move it aside to start a fresh home.")
                }
                json = plaintext
            case .string(let text) where encryption.acceptsPlaintext:
                json = Array(text.utf8)
            default:
                throw DraftStoreError(.databaseDamaged, "A value (edit \(record) \(key)) is stored in clear in an encrypted store."
                    + " Restore the database from a backup, or move it aside to start a fresh home.")
            }
            do {
                var reader = JSONReader(json)
                answers[key] = try AnswerValue.readOptional(from: &reader)
                try reader.finish()
            } catch {
                throw DraftStoreError(.databaseDamaged, "The stored answers of record \(record) cannot be read (field \(key): \(error)).")
            }
            local.key(key)
            local.raw(json)
        }
        local.endObject()
        return ReadAnswers(stored: (fields, String(decoding: local.bytes, as: UTF8.self)), answers: answers)
    }
}

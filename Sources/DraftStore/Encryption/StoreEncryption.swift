import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// How a store's values are sealed: the SQL functions every statement that writes or reads a value goes
/// through, the key check, and the encryption of a database that holds values in clear (migration
/// `v13-encrypted-store`).
///
/// Every connection of the pool has four functions, each taking the value and then the parts of its place
/// (its table's tag and the row's identity: record id, field key…):
/// - `fs_seal(text, parts…)`: a BLOB sealed at that place (a BLOB given is already sealed and kept);
/// - `fs_open(value, parts…)`: the text of a sealed BLOB;
/// - `fs_seal_fields(json, parts…)`, `fs_open_fields(json, parts…)`: a ``RecordFields`` JSON whose answers are
///   sealed one by one (place: the parts and the field's key), its stamps and writers left in clear.
/// NULL stays NULL. In a store opened without encryption they return their value as it is.
///
/// `fs_seal` and `fs_open`, called once per value (200 times to open a 200-field draft's unsent edits), are
/// registered with SQLite directly: they read the value and its place from SQLite's own argument bytes and hand
/// the result back with one copy, where GRDB's function wrapper made an array of `DatabaseValue`s (the BLOB copied
/// into a `Data`, every part into a `String`) and copied a `String` result back. Their errors are the same
/// messages as before (``DeviceCipher/failure(_:_:)``, reported with `sqlite3_result_error`, as GRDB reports them).
final class StoreEncryption: Sendable {
    struct State: Sendable {
        var cipher: DeviceCipher?
        /// Whether a value in clear is read as it is: in an unencrypted store, and while an encrypted one
        /// still converts the values written before it was encrypted.
        var acceptsPlaintext = true
    }

    let state = Mutex(State())

    var current: State { state.withLock { $0 } }

    /// Adds the SQL functions to a connection.
    func register(_ db: Database) {
        Self.install("fs_seal", in: db, self) { encryption, context, arguments in try encryption.seal(context, arguments) }
        Self.install("fs_open", in: db, self) { encryption, context, arguments in try encryption.open(context, arguments) }
        Self.install("fs_seal_fields", in: db, self) { encryption, context, arguments in try encryption.sealFields(context, arguments) }
        Self.install("fs_open_fields", in: db, self) { encryption, context, arguments in try encryption.openFields(context, arguments) }
    }

    // MARK: - fs_seal and fs_open

    /// SQLite's arguments of one call: `sqlite3_value` pointers, valid during the call.
    typealias Arguments = UnsafeBufferPointer<OpaquePointer?>

    /// SQLite's `SQLITE_TRANSIENT`: the result is copied by SQLite before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    /// Registers `name` (any number of arguments, UTF-8, not deterministic: a seal's nonce is fresh) on the
    /// connection, calling `body` with this encryption; an error it throws is the call's SQL error, its message
    /// the error's description.
    private static func install(_ name: String, in db: Database, _ encryption: StoreEncryption,
                                _ body: @escaping @Sendable (StoreEncryption, OpaquePointer?, Arguments) throws -> Void) {
        final class Function {
            let encryption: StoreEncryption
            let body: @Sendable (StoreEncryption, OpaquePointer?, Arguments) throws -> Void
            init(_ encryption: StoreEncryption, _ body: @escaping @Sendable (StoreEncryption, OpaquePointer?, Arguments) throws -> Void) {
                self.encryption = encryption
                self.body = body
            }
        }
        let code = sqlite3_create_function_v2(
            db.sqliteConnection, name, -1, SQLITE_UTF8, Unmanaged.passRetained(Function(encryption, body)).toOpaque(),
            { context, count, values in
                let function = Unmanaged<Function>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
                do {
                    try function.body(function.encryption, context, Arguments(start: values, count: values == nil ? 0 : Int(count)))
                } catch {
                    sqlite3_result_error(context, "\(error)", -1)
                }
            },
            nil, nil,
            { function in Unmanaged<Function>.fromOpaque(function!).release() })
        // Fails only for a name or argument count SQLite rejects, which these are not.
        precondition(code == SQLITE_OK, "sqlite3_create_function_v2(\(name)) failed: \(code)")
    }

    /// `fs_seal(text, parts…)`.
    private func seal(_ context: OpaquePointer?, _ arguments: Arguments) throws {
        guard let value = arguments.first ?? nil, sqlite3_value_type(value) != SQLITE_NULL else { return sqlite3_result_null(context) }
        guard let cipher = current.cipher else { return sqlite3_result_value(context, value) }
        switch sqlite3_value_type(value) {
        case SQLITE_BLOB: return sqlite3_result_value(context, value)
        case SQLITE_TEXT: break
        default: throw DeviceCipher.damaged("A value to seal is not text.")
        }
        let sealed = try Self.withPlace(arguments) { try cipher.sealData(Self.bytes(of: value), place: $0) }
        sealed.withUnsafeBytes { sqlite3_result_blob(context, $0.baseAddress, Int32($0.count), Self.transient) }
    }

    /// `fs_open(value, parts…)`.
    private func open(_ context: OpaquePointer?, _ arguments: Arguments) throws {
        guard let value = arguments.first ?? nil, sqlite3_value_type(value) != SQLITE_NULL else { return sqlite3_result_null(context) }
        let state = current
        guard sqlite3_value_type(value) == SQLITE_BLOB else {
            guard state.acceptsPlaintext else {
                throw DeviceCipher.damaged("A value (\(Self.describe(arguments))) is stored in clear in an encrypted store.")
            }
            return sqlite3_result_value(context, value)
        }
        guard let cipher = state.cipher else {
            throw DeviceCipher.failure(.deviceKeyUnusable, "The device database holds encrypted values and was opened without its key.")
        }
        let start = sqlite3_value_blob(value)
        let count = Int(sqlite3_value_bytes(value))
        let sealed = UnsafeRawBufferPointer(start: start, count: count)
        guard count > 0, let plaintext = Self.withPlace(arguments, { cipher.openData(sealed, place: $0) }) else {
            throw DeviceCipher.damaged("A stored value (\(Self.describe(arguments))) does not open with the device key: it was altered or moved.")
        }
        // The plaintext was sealed from a string's UTF-8; an empty one is given as "" (a nil pointer would be NULL).
        if plaintext.isEmpty { return sqlite3_result_text(context, "", 0, Self.transient) }
        plaintext.withUnsafeBytes { sqlite3_result_text(context, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count), Self.transient) }
    }

    /// `fs_seal_fields(json, parts…)`: a value that is not text (NULL, or anything else) is given back as it is.
    private func sealFields(_ context: OpaquePointer?, _ arguments: Arguments) throws {
        guard let value = arguments.first ?? nil, sqlite3_value_type(value) != SQLITE_NULL else { return sqlite3_result_null(context) }
        guard let cipher = current.cipher, sqlite3_value_type(value) == SQLITE_TEXT else { return sqlite3_result_value(context, value) }
        Self.resultText(context, try cipher.sealFields(Array(Self.bytes(of: value)), parts: Self.parts(arguments)))
    }

    /// `fs_open_fields(json, parts…)`: a value that is not text, or any value in a store without a key (which has no
    /// sealed answer), is given back as it is.
    private func openFields(_ context: OpaquePointer?, _ arguments: Arguments) throws {
        guard let value = arguments.first ?? nil, sqlite3_value_type(value) != SQLITE_NULL else { return sqlite3_result_null(context) }
        let state = current
        guard let cipher = state.cipher, sqlite3_value_type(value) == SQLITE_TEXT else { return sqlite3_result_value(context, value) }
        Self.resultText(context, try cipher.openFields(Array(Self.bytes(of: value)), parts: Self.parts(arguments), acceptsPlaintext: state.acceptsPlaintext))
    }

    /// Sets the call's result to the text `bytes` (UTF-8), copied by SQLite.
    private static func resultText(_ context: OpaquePointer?, _ bytes: [UInt8]) {
        if bytes.isEmpty { return sqlite3_result_text(context, "", 0, transient) }
        bytes.withUnsafeBytes { sqlite3_result_text(context, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count), transient) }
    }

    /// The bytes of an argument as text (SQLite's text of an integer is its decimal digits; NULL is empty), valid
    /// until the argument is read again or the call returns.
    private static func bytes(of value: OpaquePointer) -> UnsafeRawBufferPointer {
        guard let text = sqlite3_value_text(value) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: text, count: Int(sqlite3_value_bytes(value)))
    }

    /// ``DeviceCipher/place(_:)`` of the arguments after the value, written straight from SQLite's argument bytes
    /// into a buffer on the stack (called once per value sealed or opened); a place longer than that buffer is
    /// made on the heap.
    static func withPlace<Result>(_ arguments: Arguments, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            var count = 0
            var fits = true
            for index in arguments.indices.dropFirst() {
                let part = arguments[index].map(bytes(of:)) ?? UnsafeRawBufferPointer(start: nil, count: 0)
                let needed = (index > 1 ? 1 : 0) + part.count
                guard count + needed <= buffer.count else { fits = false; break }
                if index > 1 { buffer[count] = 0; count += 1 }
                for byte in part { buffer[count] = byte; count += 1 }
            }
            guard fits else { return try DeviceCipher.place(parts(arguments)).withUnsafeBytes(body) }
            return try body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[..<count])))
        }
    }

    /// The parts after the value, as text (for a place that does not fit on the stack, and for messages).
    static func parts(_ arguments: Arguments) -> [String] {
        arguments.dropFirst().map { value in value.map { String(decoding: bytes(of: $0), as: UTF8.self) } ?? "" }
    }

    static func describe(_ arguments: Arguments) -> String {
        parts(arguments).joined(separator: " ")
    }

    // MARK: - Opening

    /// Reads the store's key record and sets the cipher: with `provider`, the key it gives (checked against the
    /// store's check value; made when the store has none); without, none (refused when the store is
    /// encrypted). Then converts, batch by batch, what an earlier version left in clear.
    func open(_ pool: DatabasePool, path: String, provider: (any DeviceKeyProvider)?, batchSize: Int, batchLimit: Int?, sealFiles: () throws -> Void) throws {
        let row = try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT salt, key_check, state FROM device_encryption WHERE id = 1")
        }
        guard let provider else {
            if row != nil {
                throw DraftStoreError(.deviceKeyUnusable,
                    "The device database \(path) is encrypted; open it with its device key (the key file, passphrase or keystore it was made with).")
            }
            state.withLock { $0 = State(cipher: nil, acceptsPlaintext: true) }
            return
        }
        let cipher: DeviceCipher
        var converting = true
        if let row {
            let salt: Data = row["salt"]
            let check: Data = row["key_check"]
            cipher = DeviceCipher(try provider.dataKey(for: DeviceKeyRequest(databasePath: path, salt: Array(salt), mayCreate: false)))
            guard cipher.open(Array(check), place: Self.keyCheckPlace) == Self.keyCheckPlaintext else {
                throw DraftStoreError(.deviceKeyUnusable,
                    "The device key given does not open the device database \(path) (a wrong passphrase, or the key file of another home). Nothing was read or changed.")
            }
            converting = (row["state"] as String) != "encrypted"
        } else {
            var salt = [UInt8](repeating: 0, count: 16)
            var generator = SystemRandomNumberGenerator()
            for index in salt.indices { salt[index] = UInt8.random(in: 0...255, using: &generator) }
            cipher = DeviceCipher(try provider.dataKey(for: DeviceKeyRequest(databasePath: path, salt: salt, mayCreate: true)))
            let check = try cipher.seal(Self.keyCheckPlaintext, place: Self.keyCheckPlace)
            try pool.write { db in
                try db.execute(sql: """
                    INSERT INTO device_encryption (id, salt, key_check, state, records_done) VALUES (1, ?, ?, 'encrypting', 0)
                    ON CONFLICT (id) DO NOTHING
                    """, arguments: [Data(salt), Data(check)])
            }
            // Another process may have set the key first: then that one is the store's, and this one must match it.
            if let stored = try pool.read({ db in try Data.fetchOne(db, sql: "SELECT key_check FROM device_encryption WHERE id = 1") }),
                cipher.open(Array(stored), place: Self.keyCheckPlace) != Self.keyCheckPlaintext {
                throw DraftStoreError(.deviceKeyUnusable, "Another process set a different device key for \(path) at the same moment; open it again.")
            }
        }
        state.withLock { $0 = State(cipher: cipher, acceptsPlaintext: converting) }
        if converting {
            try Self.encryptInPlace(pool, batchSize: batchSize, batchLimit: batchLimit, sealFiles: sealFiles)
            state.withLock { $0.acceptsPlaintext = false }
        }
    }

    static let keyCheckPlace = DeviceCipher.place(["key-check"])
    static let keyCheckPlaintext = Array("FieldSheet device key".utf8)

    /// One table's values still in clear, converted a batch at a time: the statement seals the rows its
    /// subquery selects (those whose value is still text), at most `?1` of them.
    static let conversions: [String] = [
        """
        UPDATE record_edits SET value = fs_seal(value, 'edit', record_id, key)
        WHERE (record_id, key) IN (SELECT record_id, key FROM record_edits WHERE typeof(value) = 'text' LIMIT ?1)
        """,
        """
        UPDATE outbox SET value = fs_seal(value, 'outbox', record_id, coalesce(field_id, ''))
        WHERE mutation_id IN (SELECT mutation_id FROM outbox WHERE typeof(value) = 'text' LIMIT ?1)
        """,
        """
        UPDATE presentations SET snapshot_fields = fs_seal(snapshot_fields, 'snapshot', id, record_id)
        WHERE rowid IN (SELECT rowid FROM presentations WHERE typeof(snapshot_fields) = 'text' LIMIT ?1)
        """,
        """
        UPDATE conflicts SET local_value = fs_seal(local_value, 'conflict', record_id, field_id, 'local'),
            remote_value = fs_seal(remote_value, 'conflict', record_id, field_id, 'remote'),
            reason = fs_seal(reason, 'conflict', record_id, field_id, 'reason')
        WHERE id IN (SELECT id FROM conflicts WHERE typeof(local_value) = 'text' OR typeof(remote_value) = 'text' OR typeof(reason) = 'text' LIMIT ?1)
        """,
        """
        UPDATE sent_mutations SET body = fs_seal(body, 'mutation', mutation_id, record_id)
        WHERE rowid IN (SELECT rowid FROM sent_mutations WHERE typeof(body) = 'text' LIMIT ?1)
        """,
        """
        UPDATE entities SET fields = fs_seal(fields, 'entity', list, id)
        WHERE rowid IN (SELECT rowid FROM entities WHERE typeof(fields) = 'text' LIMIT ?1)
        """,
        """
        UPDATE entity_local_changes SET value = fs_seal(value, 'entity-change', list, entity_id, property)
        WHERE rowid IN (SELECT rowid FROM entity_local_changes WHERE typeof(value) = 'text' LIMIT ?1)
        """,
        """
        UPDATE sealed_plaintexts SET value = fs_seal(value, 'sensitive', record_id, key)
        WHERE (record_id, key) IN (SELECT record_id, key FROM sealed_plaintexts WHERE typeof(value) = 'text' LIMIT ?1)
        """,
        """
        UPDATE signing_key SET private_key = fs_seal(private_key, 'signing-key')
        WHERE id IN (SELECT id FROM signing_key WHERE typeof(private_key) = 'text' LIMIT ?1)
        """,
    ]

    /// Seals what the store holds in clear, in committed batches of `batchSize` rows: a process stopped part
    /// way leaves every batch before done, and the next open goes on from there (a row's value is text until
    /// its batch commits; the records, whose sealed fields are JSON text too, keep how far they got in
    /// `device_encryption`). Then `sealFiles` seals the attachments' files. `batchLimit` stops after that
    /// many batches (tests of a stop part way).
    static func encryptInPlace(_ pool: DatabasePool, batchSize: Int, batchLimit: Int?, sealFiles: () throws -> Void) throws {
        try pool.writeWithoutTransaction { db in
            // A value rewritten sealed leaves no copy in clear in the page it left (nor in a freed page).
            try db.execute(sql: "PRAGMA secure_delete = ON")
            defer { try? db.execute(sql: "PRAGMA secure_delete = OFF") }
            var batches = 0
            var converted = 0
            func batch(_ body: () throws -> Int) throws -> Bool {
                if let batchLimit, batches >= batchLimit {
                    throw DraftStoreError(.storageFailed, "Stopped encrypting the device database after \(batches) batches, as asked.")
                }
                batches += 1
                var changed = 0
                try db.inTransaction {
                    changed = try body()
                    return .commit
                }
                converted += changed
                return changed > 0
            }
            for conversion in conversions {
                while try batch({
                    try db.execute(sql: conversion, arguments: [batchSize])
                    return db.changesCount
                }) {}
            }
            let progress: [(table: String, column: String, statement: String)] = [
                ("records", "records_done", "UPDATE records SET fields = fs_seal_fields(fields, 'record', id) WHERE rowid = ?"),
            ]
            for step in progress {
                while try batch({
                    let done = try Int64.fetchOne(db, sql: "SELECT \(step.column) FROM device_encryption WHERE id = 1") ?? 0
                    let rows = try Int64.fetchAll(db, sql: "SELECT rowid FROM \(step.table) WHERE rowid > ? ORDER BY rowid LIMIT ?", arguments: [done, batchSize])
                    let seal = try db.makeStatement(sql: step.statement)
                    for row in rows { try seal.execute(arguments: [row]) }
                    if let last = rows.last {
                        try db.execute(sql: "UPDATE device_encryption SET \(step.column) = ? WHERE id = 1", arguments: [last])
                    }
                    return rows.count
                }) {}
            }
            try sealFiles()
            // What the file held in clear before (freed pages, the write-ahead log's old frames) is rewritten
            // away: the database is rebuilt and the log emptied. Another process reading the database at this
            // moment keeps them from running (docs/device-encryption.md says so). A new database, with nothing
            // converted and no freed page, has nothing to rewrite.
            let freed = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            if converted > 0 || freed > 0 {
                try? db.execute(sql: "VACUUM")
                try? db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
            try db.execute(sql: "UPDATE device_encryption SET state = 'encrypted' WHERE id = 1")
        }
    }
}

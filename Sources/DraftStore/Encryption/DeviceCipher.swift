#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif
#if !canImport(CryptoKit) && canImport(CryptoBoringWrapper)
import CryptoBoringWrapper
#endif
import Foundation
import FormModel
import Synchronization

/// ChaCha20-Poly1305 with the device data key, as the device database uses it (docs/device-encryption.md).
///
/// A sealed value is `version (1 byte) | nonce (12) | ciphertext | tag (16)`, a fresh random nonce each time.
/// Its associated data is the value's place, its parts joined by NUL bytes (`edit`, record id, field key):
/// the tag holds only where the value was written, so a value moved to another row, field or table is refused.
///
/// `@unchecked Sendable`: swift-crypto does not mark `SymmetricKey` Sendable on Linux, but it is an immutable
/// value (its bytes are never changed after it is made), safe to read from any thread.
struct DeviceCipher: @unchecked Sendable {
    /// The first byte of every sealed value.
    static let version: UInt8 = 1
    /// Bytes a sealed value adds to its plaintext.
    static let overhead = 1 + 12 + 16
    /// Prefix of the message of an SQLite error raised by the cipher's SQL functions (``DraftStoreError/wrap``
    /// turns it back into a `DraftStoreError`).
    static let errorPrefix = "fieldsheet-cipher:"

    let key: SymmetricKey

    #if !canImport(CryptoKit) && canImport(CryptoBoringWrapper)
    /// The key's ChaCha20-Poly1305 contexts, made once and reused (see ``Contexts``).
    private let contexts: Contexts

    init(_ key: DeviceDataKey) {
        self.key = key.key
        contexts = Contexts(key: key.key)
    }
    #else
    init(_ key: DeviceDataKey) {
        self.key = key.key
    }
    #endif

    /// The associated data of a value at `parts`.
    static func place(_ parts: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(parts.reduce(0) { $0 + $1.utf8.count + 1 })
        var first = true
        for part in parts {
            if !first { bytes.append(0) }
            first = false
            bytes.append(contentsOf: part.utf8)
        }
        return bytes
    }

    // The sealed layout after the version byte is exactly ChaChaPoly's combined representation (nonce,
    // ciphertext, tag). With CryptoKit a value is sealed and opened through `ChaChaPoly` in one piece. On
    // Linux, swift-crypto's `ChaChaPoly` is BoringSSL's ChaCha20-Poly1305 AEAD behind a context it makes and
    // frees on every call, plus copies into `Data` on the way in: there the cipher keeps the key's contexts
    // and opens a value from the bytes where they lie (docs/device-encryption.md, "One context per key").

    #if canImport(CryptoKit) || !canImport(CryptoBoringWrapper)
    func seal<Plaintext: DataProtocol>(_ plaintext: Plaintext, place: [UInt8]) throws -> [UInt8] {
        let box = try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(), authenticating: place)
        var sealed: [UInt8] = []
        sealed.reserveCapacity(Self.overhead + plaintext.count)
        sealed.append(Self.version)
        sealed.append(contentsOf: box.combined)
        return sealed
    }

    /// `plaintext` sealed at `place` with `nonce` (12 fresh random bytes, ``nonces(count:)``), written over the contents of
    /// `sealed` (its capacity kept for the next value).
    func seal<Plaintext: DataProtocol, Place: DataProtocol>(
        _ plaintext: Plaintext, place: Place, nonce: ArraySlice<UInt8>, into sealed: inout [UInt8]
    ) throws {
        let box = try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: place)
        sealed.removeAll(keepingCapacity: true)
        sealed.reserveCapacity(Self.overhead + plaintext.count)
        sealed.append(Self.version)
        sealed.append(contentsOf: box.combined)
    }

    /// ``seal(_:place:)`` as the `Data` SQLite stores, made in one piece.
    func sealData<Plaintext: DataProtocol, Place: DataProtocol>(_ plaintext: Plaintext, place: Place) throws -> Data {
        let box = try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(), authenticating: place)
        var sealed = Data(capacity: Self.overhead + plaintext.count)
        sealed.append(Self.version)
        sealed.append(box.combined)
        return sealed
    }

    /// ``open(_:place:)`` of bytes as they come (a BLOB SQLite handed over, a buffer decoded into), the plaintext as
    /// swift-crypto gives it: no copy on the way in or out; the place as any bytes (a buffer kept for a record's
    /// values, or one on the stack).
    func openData<Sealed: DataProtocol, Place: DataProtocol>(_ sealed: Sealed, place: Place) -> Data? where Sealed.SubSequence: DataProtocol {
        guard sealed.count >= Self.overhead, sealed.first == Self.version,
            let box = try? ChaChaPoly.SealedBox(combined: sealed.dropFirst()),
            let plaintext = try? ChaChaPoly.open(box, using: key, authenticating: place)
        else { return nil }
        return plaintext
    }
    #else
    func seal<Plaintext: DataProtocol>(_ plaintext: Plaintext, place: [UInt8]) throws -> [UInt8] {
        var sealed: [UInt8] = []
        var nonces = Self.nonces(count: 1)
        try seal(plaintext, place: place, nonce: nonces.next(), into: &sealed)
        return sealed
    }

    /// `plaintext` sealed at `place` with `nonce` (12 fresh random bytes, ``nonces(count:)``), written over the contents of
    /// `sealed` (its capacity kept for the next value).
    func seal<Plaintext: DataProtocol, Place: DataProtocol>(
        _ plaintext: Plaintext, place: Place, nonce: ArraySlice<UInt8>, into sealed: inout [UInt8]
    ) throws {
        let (ciphertext, tag) = try contexts.use { try $0.seal(message: plaintext, nonce: nonce, authenticatedData: place) }
        sealed.removeAll(keepingCapacity: true)
        sealed.reserveCapacity(Self.overhead + plaintext.count)
        sealed.append(Self.version)
        sealed.append(contentsOf: nonce)
        sealed.append(contentsOf: ciphertext)
        sealed.append(contentsOf: tag)
    }

    /// ``seal(_:place:)`` as the `Data` SQLite stores, made in one piece.
    func sealData<Plaintext: DataProtocol, Place: DataProtocol>(_ plaintext: Plaintext, place: Place) throws -> Data {
        var nonces = Self.nonces(count: 1)
        let nonce = nonces.next()
        let (ciphertext, tag) = try contexts.use { try $0.seal(message: plaintext, nonce: nonce, authenticatedData: place) }
        var sealed = Data(capacity: Self.overhead + plaintext.count)
        sealed.append(Self.version)
        sealed.append(contentsOf: nonce)
        sealed.append(ciphertext)
        sealed.append(tag)
        return sealed
    }

    /// ``open(_:place:)`` of bytes as they come (a BLOB SQLite handed over, a buffer decoded into), the plaintext as
    /// BoringSSL writes it: the nonce and the ciphertext with its tag are read where they lie, through a kept
    /// context; the place as any bytes (a buffer kept for a record's values, or one on the stack).
    func openData<Sealed: DataProtocol, Place: DataProtocol>(_ sealed: Sealed, place: Place) -> Data? where Sealed.SubSequence: DataProtocol {
        guard sealed.count >= Self.overhead, sealed.first == Self.version else { return nil }
        if let opened = sealed.withContiguousStorageIfAvailable({ openContiguous(UnsafeRawBufferPointer($0), place: place) }) {
            return opened
        }
        return Array(sealed).withUnsafeBytes { openContiguous($0, place: place) }
    }

    /// `sealed` (version byte, nonce, ciphertext, tag; at least ``overhead`` bytes) opened in place: the
    /// ciphertext and tag go to BoringSSL as a `Data` that views them without a copy, valid during the call only.
    private func openContiguous<Place: DataProtocol>(_ sealed: UnsafeRawBufferPointer, place: Place) -> Data? {
        guard let base = sealed.baseAddress, sealed.count >= Self.overhead else { return nil }
        let nonce = UnsafeRawBufferPointer(start: base + 1, count: 12)
        let combined = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base + 13), count: sealed.count - 13, deallocator: .none)
        return try? contexts.use { try $0.open(combinedCiphertextAndTag: combined, nonce: nonce, authenticatedData: place) }
    }

    /// BoringSSL ChaCha20-Poly1305 contexts of one key, made when first needed and kept for the next value:
    /// making one (and freeing it) is most of what swift-crypto's `ChaChaPoly.open` costs a small value.
    ///
    /// A context is used by one thread at a time: ``use(_:)`` takes it out of the idle list for the call and
    /// puts it back after, so there are as many as threads seal or open at once (the store's connections),
    /// and at most ``idleLimit`` wait. BoringSSL would allow concurrent `EVP_AEAD_CTX_open`/`seal` on one
    /// initialised context (they take it `const`), but swift-crypto's wrapper reaches it through an `inout`
    /// access to a stored property, which Swift's exclusivity rules do not allow from two threads at once.
    ///
    /// `@unchecked Sendable`: the key is an immutable value (as ``DeviceCipher``'s), and the contexts are
    /// handed out under the mutex, each to one caller at a time.
    final class Contexts: @unchecked Sendable {
        private final class Context: @unchecked Sendable {
            let aead: BoringSSLAEAD.AEADContext
            init(_ aead: BoringSSLAEAD.AEADContext) { self.aead = aead }
        }

        static let idleLimit = 16
        private let key: SymmetricKey
        private let idle = Mutex<[Context]>([])

        init(key: SymmetricKey) {
            self.key = key
        }

        /// Runs `body` with a context of the key no other thread uses meanwhile.
        func use<Result>(_ body: (BoringSSLAEAD.AEADContext) throws -> Result) throws -> Result {
            let context = try idle.withLock { $0.popLast() } ?? Context(BoringSSLAEAD.AEADContext(cipher: .chacha20, key: key))
            defer { idle.withLock { if $0.count < Self.idleLimit { $0.append(context) } } }
            return try body(context.aead)
        }
    }
    #endif

    /// The plaintext of `sealed`, or nil when it was not sealed with this key at this place (or was altered).
    func open(_ sealed: [UInt8], place: [UInt8]) -> [UInt8]? {
        openData(sealed[...], place: place).map { Array($0) }
    }

    /// Fresh random nonces for a run of seals, 12 random bytes each, read from the system's generator up to 21 at a
    /// time (``SystemRandomBytes/Runs``): swift-crypto's `ChaChaPoly.Nonce()` makes two system calls for each (8
    /// bytes a call), which were a third of sealing a record's answers.
    static func nonces(count: Int) -> SystemRandomBytes.Runs {
        SystemRandomBytes.Runs(size: 12, count: count)
    }

    /// The places of one record's values (``place(_:)`` of `parts` + a field's key), their common part made once.
    struct Places {
        private var bytes: [UInt8]
        private let common: Int

        init(_ parts: [String]) {
            bytes = DeviceCipher.place(parts)
            if !parts.isEmpty { bytes.append(0) }
            bytes.reserveCapacity(bytes.count + 64)
            common = bytes.count
        }

        /// ``place(_:)`` of the parts and `key`, valid until the next call.
        mutating func place(_ key: String) -> [UInt8] {
            bytes.removeSubrange(common...)
            bytes.append(contentsOf: key.utf8)
            return bytes
        }
    }

    // MARK: - Record fields

    /// `fields` (the ``RecordFields`` JSON) with each answer of `values` sealed in place as a base64 string, its
    /// place `parts` + the field's key; stamps, writers and cleared (null) fields stay as they are. An answer
    /// already sealed (a string) is kept, so sealing twice changes nothing.
    ///
    /// The answers' places share their common part (``Places``), their nonces are read for the record at once
    /// (``nonces(count:)``), and each sealed value is written as base64 straight into the JSON (``Base64Bytes``).
    func sealFields(_ fields: [UInt8], parts: [String]) throws -> [UInt8] {
        var places = Places(parts)
        // One nonce per answer: a record's answers number fewer than its bytes over 8 (`"k":{}` each at least).
        var nonces = Self.nonces(count: fields.count / 8)
        var sealed: [UInt8] = []
        var text: [UInt8] = []
        return try rewriteValues(fields) { key, raw, writer in
            if raw.first == UInt8(ascii: "\"") || raw.elementsEqual("null".utf8) {
                writer.raw(raw)
            } else {
                try seal(raw, place: places.place(key), nonce: nonces.next(), into: &sealed)
                text.removeAll(keepingCapacity: true)
                text.append(UInt8(ascii: "\""))
                Base64Bytes.encode(sealed, into: &text)
                text.append(UInt8(ascii: "\""))
                writer.raw(text)
            }
        }
    }

    /// The plaintext ``RecordFields`` JSON of `fields` as ``sealFields(_:parts:)`` wrote it. An answer still in
    /// clear (an object) is kept when `acceptsPlaintext` (a store being encrypted), refused otherwise.
    func openFields(_ fields: [UInt8], parts: [String], acceptsPlaintext: Bool) throws -> [UInt8] {
        var places = Places(parts)
        var sealed: [UInt8] = []
        return try Self.rewriteValues(fields) { key, raw, writer in
            if raw.first == UInt8(ascii: "\"") {
                // The base64 text between the quotes, decoded from the bytes as they are; a string with an escape
                // (not what sealFields writes, but JSON all the same) is read as a string first.
                let decoded = raw.count >= 2 && !raw.contains(UInt8(ascii: "\\"))
                    ? raw.withUnsafeBufferPointer { Base64Bytes.decode(UnsafeBufferPointer(rebasing: $0.dropFirst().dropLast()), into: &sealed) }
                    : Self.decodeEscaped(raw, into: &sealed)
                guard decoded, let plaintext = openData(sealed, place: places.place(key)) else {
                    throw Self.damaged("The stored answer of field \"\(key)\" (\(parts.joined(separator: " "))) does not open with the device key: it was altered or moved.")
                }
                writer.raw(plaintext)
            } else if raw.elementsEqual("null".utf8) || acceptsPlaintext {
                writer.raw(raw)
            } else {
                throw Self.damaged("The answer of field \"\(key)\" (\(parts.joined(separator: " "))) is stored in clear in an encrypted store.")
            }
        }
    }

    /// ``Base64Bytes/decode(_:into:)`` of a JSON string that has escapes in it.
    private static func decodeEscaped(_ raw: ArraySlice<UInt8>, into output: inout [UInt8]) -> Bool {
        var reader = JSONReader(Array(raw))
        guard var text = try? reader.readString() else { return false }
        return text.withUTF8 { Base64Bytes.decode($0, into: &output) }
    }

    private func rewriteValues(_ fields: [UInt8], _ value: (String, ArraySlice<UInt8>, inout JSONWriter) throws -> Void) throws -> [UInt8] {
        try Self.rewriteValues(fields, value)
    }

    /// `fields` copied member by member, each entry of its `values` object given to `value` to write.
    static func rewriteValues(_ fields: [UInt8], _ value: (String, ArraySlice<UInt8>, inout JSONWriter) throws -> Void) throws -> [UInt8] {
        var reader = JSONReader(fields)
        var writer = JSONWriter(capacity: fields.count + fields.count / 2)
        try reader.beginObject()
        writer.beginObject()
        while let member = try reader.nextKey() {
            writer.key(member)
            guard member == "values" else {
                writer.raw(try reader.rawValue())
                continue
            }
            try reader.beginObject()
            writer.beginObject()
            while let key = try reader.nextKey() {
                writer.key(key)
                try value(key, try reader.rawValue(), &writer)
            }
            writer.endObject()
        }
        writer.endObject()
        try reader.finish()
        return writer.bytes
    }

    // MARK: - Errors

    /// An error for SQLite to report: ``DraftStoreError/wrap`` turns it back into `code` and `message`.
    static func failure(_ code: DraftStoreError.Code, _ message: String) -> any Error {
        DatabaseFunctionFailure(message: "\(errorPrefix)\(code.rawValue):\(message)")
    }

    static func damaged(_ message: String) -> any Error {
        failure(.databaseDamaged, message + " Restore the database from a backup, or move it aside to start a fresh home.")
    }

    /// The `DraftStoreError` an SQLite error message raised by the cipher carries, if it is one.
    static func storeError(in message: String) -> DraftStoreError? {
        guard let range = message.range(of: errorPrefix) else { return nil }
        let rest = message[range.upperBound...]
        guard let colon = rest.firstIndex(of: ":"), let code = DraftStoreError.Code(rawValue: String(rest[..<colon])) else { return nil }
        return DraftStoreError(code, String(rest[rest.index(after: colon)...]))
    }
}

/// An error thrown inside an SQL function; its message is what SQLite reports.
struct DatabaseFunctionFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif
import Foundation
import GRDB
internal import SyncCore

/// Signed submissions on the device (docs/signed-submissions.md): the device's Ed25519 key pair, made at its
/// first login and kept in the database with its private half sealed with the device data key, like every
/// answer; it never leaves the device. Each push is signed once, when its batch is prepared
/// (``prepareOutgoingBatch(limit:)``), over the digests of the frozen mutations it sends, in order.
extension DraftStore {
    /// The public half of this device's signing key (base64 of its 32 raw bytes), made now when the device has
    /// none yet; the login sends it to the server, which keeps it with the device's token.
    public func signingPublicKey() async throws -> String {
        try await write(doing: "making the device's signing key") { db in try Self.signingKey(db).publicKey }
    }

    /// Which login the signing key was last registered with (an opaque fingerprint of the server's URL and
    /// token, ``SigningKeyRegistration``); nil when none.
    package func signingKeyRegistration() async throws -> String? {
        try await read(doing: "reading the signing key") { db in
            try String.fetchOne(db, sql: "SELECT registered_for FROM signing_key WHERE id = 1")
        }
    }

    /// Notes that the server of `fingerprint` holds this device's public key with its token.
    package func setSigningKeyRegistered(_ fingerprint: String) async throws {
        try await write(doing: "noting the signing key's registration") { db in
            _ = try Self.signingKey(db)
            try db.execute(sql: "UPDATE signing_key SET registered_for = ? WHERE id = 1", arguments: [fingerprint])
        }
    }

    /// The device's signing key, made and stored (sealed) when there is none; in the caller's write transaction.
    static func signingKey(_ db: Database) throws -> DeviceSigningKey {
        if let stored = try String.fetchOne(db.cachedStatement(sql: "SELECT fs_open(private_key, 'signing-key') FROM signing_key WHERE id = 1")) {
            guard let raw = Data(base64Encoded: stored), let key = try? DeviceSigningKey(rawRepresentation: raw) else {
                throw DraftStoreError(.storageFailed, "The device's signing key is damaged (signing_key.private_key is not an Ed25519 key). Log in again to make a new one.")
            }
            return key
        }
        let key = DeviceSigningKey()
        try db.execute(sql: """
            INSERT INTO signing_key (id, private_key, public_key, created_at) VALUES (1, fs_seal(?, 'signing-key'), ?, ?)
            """, arguments: [key.rawRepresentation.base64EncodedString(), key.publicKey, nowMillis()])
        return key
    }
}

/// The fingerprint of a login that a signing key was registered with: the SHA-256 of the server's URL and the
/// token (never the token itself), hex.
package enum SigningKeyRegistration {
    package static func fingerprint(serverURL: String, token: String) -> String {
        var base = serverURL
        while base.hasSuffix("/") { base.removeLast() }
        return SHA256.hash(data: Array("\(base)\n\(token)".utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

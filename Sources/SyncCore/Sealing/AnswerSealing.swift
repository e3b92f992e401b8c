#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif
import Foundation
import FormModel

/// A project's public key as devices receive it with the forms: its id and the X25519 public key, base64 of
/// the 32 raw bytes. Devices seal sensitive answers to the current one.
public struct ProjectPublicKey: Codable, Sendable, Hashable {
    /// The key's id, which every answer sealed to it names.
    public var id: String
    /// The X25519 public key: base64 of its 32 raw bytes.
    public var publicKey: String

    /// A project key with its id and public key (base64 of the 32 raw bytes).
    public init(id: String, publicKey: String) {
        self.id = id
        self.publicKey = publicKey
    }
}

/// Why a sealed answer could not be sealed or opened, said for the person running the command.
public struct SealingError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong and what to do.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}

/// Sealing sensitive answers to a project key, and opening them with its private key: HPKE (RFC 9180) in
/// base mode with X25519, HKDF-SHA256 and ChaCha20-Poly1305. The `info` names the scheme and the key id;
/// the associated data is the record id and the field's path (`defects/7c1e…/cost`), so a sealed answer
/// copied to another record or field no longer opens.
public enum AnswerSealing {
    static var ciphersuite: HPKE.Ciphersuite { .Curve25519_SHA256_ChachaPoly }

    static func info(key: String) -> Data { Data("fieldsheet sealed answer v1 key \(key)".utf8) }

    static func associatedData(record: String, path: String) -> Data {
        Data("\(record.lowercased())/\(path)".utf8)
    }

    /// Seals `answer` (its tagged JSON form) to `key` for the field at `path` of `record` (its id, compared in lower case).
    public static func seal(_ answer: AnswerValue, to key: ProjectPublicKey, record: String, path: String) throws -> SealedAnswer {
        guard let raw = Data(base64Encoded: key.publicKey), let recipient = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: raw) else {
            throw SealingError("The project key \(key.id) is not an X25519 public key (base64 of 32 bytes).")
        }
        var writer = JSONWriter(capacity: 64)
        answer.write(to: &writer)
        var sender = try HPKE.Sender(recipientKey: recipient, ciphersuite: ciphersuite, info: info(key: key.id))
        let ciphertext = try sender.seal(writer.bytes, authenticating: associatedData(record: record, path: path))
        return SealedAnswer(key: key.id, enc: sender.encapsulatedKey.base64EncodedString(), ct: ciphertext.base64EncodedString())
    }

    /// Opens `sealed`, the answer of the field at `path` of `record`, with the private key of the key it names.
    public static func open(_ sealed: SealedAnswer, with privateKey: ProjectPrivateKey, record: String, path: String) throws -> AnswerValue {
        guard sealed.key == privateKey.id else {
            throw SealingError("The answer \(path) of record \(record) is sealed to the project key \(sealed.key), not \(privateKey.id).")
        }
        guard let enc = Data(base64Encoded: sealed.enc), let ciphertext = Data(base64Encoded: sealed.ct) else {
            throw SealingError("The sealed answer \(path) of record \(record) is not base64.")
        }
        let plaintext: Data
        do {
            let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey.privateRaw)
            var recipient = try HPKE.Recipient(privateKey: key, ciphersuite: ciphersuite, info: info(key: sealed.key), encapsulatedKey: enc)
            plaintext = try recipient.open(ciphertext, authenticating: associatedData(record: record, path: path))
        } catch {
            throw SealingError("The sealed answer \(path) of record \(record) does not open with the key \(sealed.key): it was changed, moved from another record or field, or sealed to another key with the same id.")
        }
        var reader = JSONReader(Array(plaintext))
        do {
            let value = try AnswerValue.read(from: &reader)
            try reader.finish()
            return value
        } catch {
            throw SealingError("The sealed answer \(path) of record \(record) opened but holds no answer: \(error)")
        }
    }
}

/// A project key's private half, as `fieldsheet-server project key create` writes it to its file. The server
/// never stores it; whoever decrypts exports keeps it.
public struct ProjectPrivateKey: Sendable {
    /// The key's id.
    public private(set) var id: String
    /// The public half, as devices receive it.
    public private(set) var publicKey: ProjectPublicKey
    /// The X25519 private key's 32 raw bytes (checked when made or read).
    let privateRaw: Data

    init(id: String, key: Curve25519.KeyAgreement.PrivateKey) {
        self.id = id
        self.privateRaw = key.rawRepresentation
        self.publicKey = ProjectPublicKey(id: id, publicKey: key.publicKey.rawRepresentation.base64EncodedString())
    }

    /// A new random key pair with `id`.
    public init(newWithID id: String) {
        self.init(id: id, key: Curve25519.KeyAgreement.PrivateKey())
    }

    /// The same key pair under another id.
    public func withID(_ id: String) -> ProjectPrivateKey {
        var copy = self
        copy.id = id
        copy.publicKey.id = id
        return copy
    }

    /// The key file's text: one JSON object naming the project, the key id and the private key (base64).
    public func fileText(project: String) -> String {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.key("format")
        writer.string("fieldsheet-project-key-v1")
        writer.key("project")
        writer.string(project)
        writer.key("keyId")
        writer.string(id)
        writer.key("privateKey")
        writer.string(privateRaw.base64EncodedString())
        writer.key("publicKey")
        writer.string(publicKey.publicKey)
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self) + "\n"
    }

    /// Reads a key file written by ``fileText(project:)``; `file` names it in errors.
    public init(fileBytes bytes: [UInt8], file: String) throws {
        var reader = JSONReader(bytes)
        var id: String?
        var privateKey: String?
        var format: String?
        do {
            try reader.beginObject()
            while let member = try reader.nextKey() {
                switch member {
                case "keyId": id = try reader.readString()
                case "privateKey": privateKey = try reader.readString()
                case "format": format = try reader.readString()
                default: _ = try reader.skipValue()
                }
            }
            try reader.finish()
        } catch {
            throw SealingError("\(file) is not a project key file (JSON written by `fieldsheet-server project key create`): \(error)")
        }
        guard format == "fieldsheet-project-key-v1", let id, let privateKey, let raw = Data(base64Encoded: privateKey),
              let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw)
        else {
            throw SealingError("\(file) is not a project key file: it needs \"format\": \"fieldsheet-project-key-v1\", \"keyId\" and \"privateKey\" (base64 of 32 bytes), as `fieldsheet-server project key create` writes them.")
        }
        self.init(id: id, key: key)
    }
}

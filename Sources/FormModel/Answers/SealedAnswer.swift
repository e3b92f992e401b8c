import Foundation

/// The answer of a sensitive field as it leaves the device: sealed with HPKE to the project's public key, so
/// only the holder of the private key reads it (docs/sensitive-fields.md).
///
/// It is an answer like any other to everything that does not need the value: it is stored, merged by its
/// stamp, paged and exported as these three texts. Readers without the key show it as
/// ``AnswerValue/sealedDisplay``.
public struct SealedAnswer: Codable, Sendable, Hashable {
    /// The id of the project key it is sealed to (older answers keep naming the key that was current then).
    public var key: String
    /// HPKE's encapsulated key (X25519, 32 bytes), base64.
    public var enc: String
    /// The sealed tagged answer (`{"text": …}` as UTF-8 JSON) with its authentication tag, base64.
    public var ct: String

    /// A sealed answer: the key's id, the encapsulated key and the ciphertext, both base64.
    public init(key: String, enc: String, ct: String) {
        self.key = key
        self.enc = enc
        self.ct = ct
    }

    /// Whether `id` is a project key id as the contract allows it (1 to 64 letters, digits, `-` or `_`).
    public static func isKeyID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F
        }
    }
}

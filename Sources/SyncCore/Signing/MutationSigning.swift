#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif
import Foundation
import FormModel

// Signed submissions (docs/signed-submissions.md). A device signs each push once with its own Ed25519 key,
// over the push's manifest (``PushManifest``): the SHA-256 of each mutation's canonical bytes exactly as
// `Mutation.jsonBytes()` writes them — the bytes the retry digest is taken over —, in the order sent. The
// signature travels as the push body's `pushSignature`; the server builds the same manifest from the bytes it
// received and verifies the one signature with the public key it keeps with the device's token before it plans
// the push. Older devices sign every mutation instead (`signatures`, one per mutation), which is still taken.

/// A device's Ed25519 signing key. The private half never leaves the device: it is kept in the device
/// database, sealed with the device data key like every answer.
///
/// Sendable by hand: the wrapped key is an immutable value (swift-crypto does not mark it Sendable).
public struct DeviceSigningKey: @unchecked Sendable {
    private let key: Curve25519.Signing.PrivateKey

    /// A new random key pair.
    public init() {
        key = Curve25519.Signing.PrivateKey()
    }

    /// The key from its 32 raw bytes (``rawRepresentation``).
    public init(rawRepresentation: Data) throws {
        key = try Curve25519.Signing.PrivateKey(rawRepresentation: rawRepresentation)
    }

    /// The private key's 32 raw bytes, for the device's own storage only.
    public var rawRepresentation: Data { key.rawRepresentation }

    /// The public half as the server keeps it: base64 of its 32 raw bytes.
    public var publicKey: String { key.publicKey.rawRepresentation.base64EncodedString() }

    /// The base64 Ed25519 signature of `bytes` (64 bytes, 88 characters).
    public func signature(for bytes: some DataProtocol) -> String {
        // Signing cannot fail for a valid key; an error here would be a broken crypto library.
        ((try? key.signature(for: bytes)) ?? Data()).base64EncodedString()
    }
}

/// The public half of a device's signing key, which the server keeps with the device's token.
///
/// Sendable by hand: the wrapped key is an immutable value (swift-crypto does not mark it Sendable).
public struct DeviceVerifyingKey: @unchecked Sendable, Hashable {
    private let key: Curve25519.Signing.PublicKey

    /// The key from base64 of its 32 raw bytes; nil when that is not an Ed25519 public key.
    public init?(base64: String) {
        guard base64.utf8.count == 44, let raw = Data(base64Encoded: base64) else { return nil }
        self.init(rawRepresentation: raw)
    }

    /// The key from its 32 raw bytes; nil when they are not an Ed25519 public key.
    public init?(rawRepresentation: Data) {
        guard rawRepresentation.count == 32, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: rawRepresentation) else { return nil }
        self.key = key
    }

    /// The key's 32 raw bytes.
    public var rawRepresentation: Data { key.rawRepresentation }

    /// The key as base64 of its 32 raw bytes.
    public var base64: String { key.rawRepresentation.base64EncodedString() }

    /// Whether `signature` (base64, as a push carries it) is this key's signature of `bytes`.
    public func isValidSignature(_ signature: String, for bytes: some DataProtocol) -> Bool {
        guard signature.utf8.count == 88, let raw = Data(base64Encoded: signature) else { return false }
        return key.isValidSignature(raw, for: bytes)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawRepresentation == rhs.rawRepresentation }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawRepresentation) }
}

/// What one push signature covers: a fixed label, then the 32-byte SHA-256 of each pushed mutation's canonical
/// bytes (``Mutation/jsonBytes()``, the retry digest), in the order of the push's `mutations`.
///
/// The label keeps a manifest's signature apart from a signature of one mutation (whose bytes begin with `{`):
/// neither can pass for the other.
public struct PushManifest: Sendable, Hashable {
    /// The bytes every manifest begins with.
    public static let label: [UInt8] = Array("fieldsheet push manifest 1\n".utf8)
    /// The length of one digest.
    public static let digestLength = 32

    /// The label, then the digests.
    public private(set) var bytes: [UInt8]

    /// An empty manifest, with room for `count` digests.
    public init(capacity count: Int = 0) {
        bytes = Self.label
        bytes.reserveCapacity(Self.label.count + count * Self.digestLength)
    }

    /// The manifest of stored digests (``digests``, concatenated); nil when their length is not a whole number of digests.
    public init?(digests: some Collection<UInt8>) {
        guard digests.count % Self.digestLength == 0 else { return nil }
        self.init(capacity: digests.count / Self.digestLength)
        bytes.append(contentsOf: digests)
    }

    /// The digests, concatenated, as the server stores them.
    public var digests: ArraySlice<UInt8> { bytes[Self.label.count...] }

    /// How many mutations the manifest lists.
    public var count: Int { (bytes.count - Self.label.count) / Self.digestLength }

    /// The digest of the mutation at `index`; nil past the end.
    public func digest(at index: Int) -> ArraySlice<UInt8>? {
        guard index >= 0, index < count else { return nil }
        let start = Self.label.count + index * Self.digestLength
        return bytes[start..<start + Self.digestLength]
    }

    /// Appends a mutation's digest (32 bytes: `SHA-256` of its canonical bytes).
    public mutating func append(digest: some Sequence<UInt8>) {
        bytes.append(contentsOf: digest)
    }

    /// Appends the digest of a mutation's canonical bytes.
    public mutating func append(canonical mutation: some DataProtocol) {
        append(digest: SHA256.hash(data: mutation))
    }

    /// The manifest of `mutations`' canonical bytes, in order.
    public init(canonical mutations: some Collection<some DataProtocol>) {
        self.init(capacity: mutations.count)
        for mutation in mutations { append(canonical: mutation) }
    }
}

extension ReadPushRequest {
    /// Reads the push body's `signatures`: an array of base64 strings.
    static func readSignatures(from reader: inout JSONReader, maximum: Int) throws -> [String] {
        var signatures: [String] = []
        do { try reader.beginArray() } catch var error as JSONReadError {
            error.path = "signatures"
            throw error
        }
        while try reader.nextElement() {
            guard signatures.count < maximum else {
                throw JSONReadError(offset: reader.offset, message: "More signatures than a push may carry (at most \(maximum))", path: "signatures")
            }
            do {
                signatures.append(try reader.readString())
            } catch var error as JSONReadError {
                error.path = "signatures[\(signatures.count)]"
                throw error
            }
        }
        return signatures
    }
}

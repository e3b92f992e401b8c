import Crypto
import Foundation
import FormModel

/// The signature of a webhook delivery (docs/integrations.md, "Verifying a delivery"): the header
/// `FieldSheet-Signature: t=TIMESTAMP,v1=HEX`, where TIMESTAMP is the attempt's Unix time in whole seconds and
/// HEX the lowercase hexadecimal HMAC-SHA256, keyed with the endpoint's secret (its UTF-8 bytes), of the
/// bytes `TIMESTAMP` `.` `BODY`. A receiver recomputes it over the raw body, compares in constant time, and
/// refuses a timestamp too far from its own clock (a replayed request).
public enum WebhookSignature {
    /// The header's name.
    public static let header = "FieldSheet-Signature"

    /// The header's value for `body` sent at `timestamp` (Unix seconds).
    public static func value(secret: String, timestamp: Int64, body: some Sequence<UInt8>) -> String {
        Signer(secret: secret).value(timestamp: timestamp, body: body)
    }

    /// The HMAC-SHA256 of `TIMESTAMP.BODY` in lowercase hexadecimal.
    public static func hex(secret: String, timestamp: Int64, body: some Sequence<UInt8>) -> String {
        Signer(secret: secret).hex(timestamp: timestamp, body: body)
    }

    /// The signature's HMAC keyed once with an endpoint's secret (the key schedule: the secret's inner and outer
    /// blocks hashed), for signing each of that endpoint's attempts without keying again. Sendable: the keyed
    /// value is never changed, and each signing works on a copy (swift-crypto's digests copy their state on
    /// write, as Swift's own collections do).
    public struct Signer: @unchecked Sendable {
        private let keyed: HMAC<SHA256>

        public init(secret: String) {
            keyed = HMAC<SHA256>(key: SymmetricKey(data: Data(secret.utf8)))
        }

        /// The header's value for `body` sent at `timestamp` (Unix seconds).
        public func value(timestamp: Int64, body: some Sequence<UInt8>) -> String {
            "t=\(timestamp),v1=\(hex(timestamp: timestamp, body: body))"
        }

        /// The HMAC-SHA256 of `TIMESTAMP.BODY` in lowercase hexadecimal.
        public func hex(timestamp: Int64, body: some Sequence<UInt8>) -> String {
            var hmac = keyed  // a copy: the keyed state is never updated
            var prefix = String(timestamp)
            prefix.append(".")
            prefix.withUTF8 { hmac.update(data: UnsafeRawBufferPointer($0)) }
            // A string's bytes in place when they are contiguous (a claimed body is), copied otherwise.
            if body.withContiguousStorageIfAvailable({ hmac.update(data: UnsafeRawBufferPointer($0)) }) == nil {
                hmac.update(data: Data(body))
            }
            return Hex.lowercase(hmac.finalize())
        }
    }

    /// Whether `header` signs `body` with `secret`, at a time within `tolerance` seconds of `now`.
    public static func verify(header: String, secret: String, body: some Sequence<UInt8>, now: Date = Date(), tolerance: Double = 300) -> Bool {
        var timestamp: Int64?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int64(pair[1]) }
            if pair[0] == "v1" { signatures.append(pair[1]) }
        }
        guard let timestamp, abs(now.timeIntervalSince1970 - Double(timestamp)) <= tolerance else { return false }
        let expected = Array(hex(secret: secret, timestamp: timestamp, body: body).utf8)
        return signatures.contains { signature in
            let given = Array(signature.utf8)
            guard given.count == expected.count else { return false }
            return zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }

    /// A new random secret for an endpoint: 32 bytes, hexadecimal.
    public static func newSecret() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { bytes in bytes.map { String(format: "%02x", $0) }.joined() }
    }
}

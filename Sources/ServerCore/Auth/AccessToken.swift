import Crypto
import Foundation

/// Bearer tokens: random, shown once, stored only as a SHA-256 hash, compared in constant time (ServerStorage's `ConstantTime`).
public enum AccessToken {
    /// A new token: `fst_` and 32 random bytes in base64url (256 bits from the system's CSPRNG).
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let encoded = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return "fst_" + encoded
    }

    /// The SHA-256 of the token's UTF-8 bytes: the only form in which a token is stored.
    public static func hash(_ token: String) -> Data {
        Data(SHA256.hash(data: Data(token.utf8)))
    }
}

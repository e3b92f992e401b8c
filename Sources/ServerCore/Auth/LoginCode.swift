import Crypto
import Foundation

/// One-time login codes: what a project admin hands a collector to enrol a device (README, "People, devices
/// and login codes"). Ten characters from a 30-letter alphabet without the look-alikes 0/O, 1/I/L and U
/// (about 49 bits), shown in two groups of five (`K7QM3-XW9TP`); typed in any case, with or without the
/// hyphen and spaces. Stored only as the SHA-256 of the normalised code; single-use, expiring, and each failed
/// exchange counts against the address like a wrong token (``AuthThrottle``).
public enum LoginCode {
    /// The letters a code is made of.
    static let alphabet = Array("23456789ABCDEFGHJKMNPQRSTVWXYZ")
    /// Characters in a code, without the hyphen.
    public static let length = 10
    /// How long a code lives unless told otherwise.
    public static let defaultLifetime: TimeInterval = 24 * 60 * 60

    /// A new code from the system's CSPRNG, as shown: `XXXXX-XXXXX`.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let code = String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
        return String(code.prefix(5)) + "-" + String(code.dropFirst(5))
    }

    /// The code as typed, upper-cased without hyphens and spaces; nil when it cannot be a code (wrong length or
    /// a letter the alphabet lacks), so a typing slip is told apart from a wrong code without a lookup.
    public static func normalized(_ typed: String) -> String? {
        let letters = Set(alphabet)
        let code = typed.uppercased().filter { $0 != "-" && $0 != " " }
        guard code.count == length, code.allSatisfy({ letters.contains($0) }) else { return nil }
        return code
    }

    /// The form in which a code is stored: the SHA-256 of its normalised text.
    public static func hash(normalized code: String) -> Data {
        Data(SHA256.hash(data: Data(code.utf8)))
    }
}

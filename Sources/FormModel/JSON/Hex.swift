import Foundation

/// Bytes written as lowercase hexadecimal, two digits a byte: the form FieldSheet gives digests (attachment and
/// history hashes), signatures and ids.
public enum Hex {
    static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `bytes` (a digest, a MAC, a buffer) as lowercase hexadecimal, written in one piece.
    public static func lowercase(_ bytes: some ContiguousBytes) -> String {
        bytes.withUnsafeBytes { raw in
            String(unsafeUninitializedCapacity: raw.count * 2) { text in
                var at = 0
                for byte in raw {
                    write(byte, into: text, at: at)
                    at += 2
                }
                return at
            }
        }
    }

    /// Writes `byte`'s two digits at `at` and `at + 1` of `text`.
    static func write(_ byte: UInt8, into text: UnsafeMutableBufferPointer<UInt8>, at: Int) {
        text[at] = digits[Int(byte >> 4)]
        text[at + 1] = digits[Int(byte & 0x0F)]
    }
}

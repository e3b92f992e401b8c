import Foundation

/// A UUID as FieldSheet writes it in text: read with ``init(text:)``, written with ``lowercased``.
extension UUID {
    /// A UUID read from its text: exactly 36 characters, hexadecimal digits (either case) in groups of 8, 4, 4, 4
    /// and 12 joined by hyphens — the form FieldSheet stores and sends (``lowercased``). Anything else is nil.
    /// Read byte by byte: Foundation's `UUID(uuidString:)` on Linux goes through `sscanf`, a cost every record id
    /// of a pull page and of a push paid.
    public init?(text: String) {
        var text = text
        guard let uuid = text.withUTF8({ Self.parse($0) }) else { return nil }
        self.init(uuid: uuid)
    }

    /// The lowercase text FieldSheet stores and sends, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`; what
    /// ``init(text:)`` reads back.
    public var lowercased: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var at = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    Hex.write(byte, into: text, at: at)
                    at += 2
                }
                return at
            }
        }
    }

    private static func parse(_ text: UnsafeBufferPointer<UInt8>) -> uuid_t? {
        guard text.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var at = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    guard text[at] == UInt8(ascii: "-") else { return false }
                    at += 1
                }
                guard let high = hexValue(text[at]), let low = hexValue(text[at + 1]) else { return false }
                out[index] = high << 4 | low
                at += 2
            }
            return true
        }
        return parsed ? bytes : nil
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Base64 (RFC 4648, standard alphabet, padded) decoded from the bytes of its text into a buffer the caller
/// keeps: the sealed answers of a record's fields are opened one after another without a `String`, a `Data`
/// or an array made for each (``DeviceCipher/openFields(_:parts:acceptsPlaintext:)``); and encoded the same
/// way, as `Data.base64EncodedString()` writes it (``DeviceCipher/sealFields(_:parts:)``).
///
/// Refuses what `Data(base64Encoded:)` refuses without options (a length not a multiple of 4, a byte outside
/// the alphabet, white space included), and padding anywhere but in the last one or two places of the last
/// group, some of which Foundation's reader lets through on Linux: ``DeviceCipher`` always writes canonical base64.
enum Base64Bytes {
    /// The value of each byte of the alphabet; 0xFF for every other byte.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        return table
    }()

    /// Replaces the contents of `output` with the bytes `text` encodes (its capacity is kept for the next call);
    /// false, with `output` emptied, when `text` is not padded base64.
    static func decode(_ text: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) -> Bool {
        output.removeAll(keepingCapacity: true)
        let count = text.count
        guard count % 4 == 0 else { return false }
        guard count > 0 else { return true }
        let padding = text[count - 1] != UInt8(ascii: "=") ? 0 : text[count - 2] != UInt8(ascii: "=") ? 1 : 2
        output.reserveCapacity(count / 4 * 3)
        let decoded = values.withUnsafeBufferPointer { table -> Bool in
            var index = 0
            while index < count {
                let a = table[Int(text[index])], b = table[Int(text[index + 1])]
                let last = index + 4 == count
                let c = last && padding == 2 ? 0 : table[Int(text[index + 2])]
                let d = last && padding >= 1 ? 0 : table[Int(text[index + 3])]
                guard (a | b | c | d) & 0xC0 == 0 else { return false }
                let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                output.append(UInt8(truncatingIfNeeded: group >> 16))
                if !(last && padding == 2) { output.append(UInt8(truncatingIfNeeded: group >> 8)) }
                if !(last && padding >= 1) { output.append(UInt8(truncatingIfNeeded: group)) }
                index += 4
            }
            return true
        }
        if !decoded { output.removeAll(keepingCapacity: true) }
        return decoded
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Appends the padded base64 text of `bytes` to `output`.
    static func encode(_ bytes: [UInt8], into output: inout [UInt8]) {
        output.reserveCapacity(output.count + (bytes.count + 2) / 3 * 4)
        alphabet.withUnsafeBufferPointer { table in
            bytes.withUnsafeBufferPointer { input in
                var index = 0
                let count = input.count
                while index + 3 <= count {
                    let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    output.append(table[Int(group >> 18)])
                    output.append(table[Int(group >> 12 & 0x3F)])
                    output.append(table[Int(group >> 6 & 0x3F)])
                    output.append(table[Int(group & 0x3F)])
                    index += 3
                }
                guard index < count else { return }
                let second = index + 1 < count
                let group = UInt32(input[index]) << 16 | (second ? UInt32(input[index + 1]) << 8 : 0)
                output.append(table[Int(group >> 18)])
                output.append(table[Int(group >> 12 & 0x3F)])
                output.append(second ? table[Int(group >> 6 & 0x3F)] : UInt8(ascii: "="))
                output.append(UInt8(ascii: "="))
            }
        }
    }
}

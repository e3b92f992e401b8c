/// Appends JSON to a byte buffer: the writing half of the sync path's byte-level codec.
///
/// Commas are placed by the writer: call ``key(_:)`` before each member's value and ``element()``
/// before each array element. Strings are escaped as RFC 8259 requires; every control character is
/// written as an escape, never raw.
public struct JSONWriter: Sendable {
    /// The JSON written so far, as UTF-8.
    public private(set) var bytes: [UInt8]
    /// Whether `/` is written as `\/` (as Foundation's encoder does by default).
    public var escapesSlashes = false
    /// Per open container: whether something was written in it (so the next item needs a comma).
    private var started: [Bool] = []

    /// An empty writer with room for `capacity` bytes before it grows.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
        started.reserveCapacity(8)
    }

    /// `strings` as a JSON array of strings: what SQL's `IN (SELECT value FROM json_each(?))` reads, so a
    /// statement takes any number of ids as one argument.
    public static func array(of strings: [String]) -> String {
        var writer = JSONWriter(capacity: strings.reduce(2) { $0 + $1.utf8.count + 3 })
        writer.beginArray()
        for string in strings {
            writer.element()
            writer.string(string)
        }
        writer.endArray()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Writes `{`.
    public mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        started.append(false)
    }

    /// Writes `}`.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        started.removeLast()
    }

    /// Writes `[`.
    public mutating func beginArray() {
        bytes.append(UInt8(ascii: "["))
        started.append(false)
    }

    /// Writes `]`.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        started.removeLast()
    }

    private mutating func separate() {
        guard let last = started.indices.last else { return }
        if started[last] { bytes.append(UInt8(ascii: ",")) } else { started[last] = true }
    }

    /// Writes a member's key (and its colon) inside an object.
    public mutating func key(_ name: String) {
        separate()
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Starts the next element of an array.
    public mutating func element() {
        separate()
    }

    /// Writes `text` as a JSON string, escaping what JSON requires.
    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (escapesSlashes && byte == UInt8(ascii: "/")) else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case UInt8(ascii: "/"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "/")])
                case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes an integer.
    public mutating func int(_ value: Int64) {
        if value >= 0, value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var magnitude = value.magnitude
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }

    /// Writes an integer.
    public mutating func int(_ value: Int) { int(Int64(value)) }

    /// Writes a finite double in the shortest form that reads back as the same value.
    public mutating func double(_ value: Double) {
        precondition(value.isFinite, "JSON has no infinities or NaN")
        if value == value.rounded(), abs(value) < 1e15 {
            int(Int64(value))
        } else {
            bytes.append(contentsOf: "\(value)".utf8)
        }
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }

    /// Writes `null`.
    public mutating func null() {
        bytes.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
    }

    /// Appends bytes that already are one JSON value (stored record fields, say), as they are.
    public mutating func raw<Bytes: Sequence>(_ json: Bytes) where Bytes.Element == UInt8 {
        bytes.append(contentsOf: json)
    }

    /// Empties the buffer of what was written so far, keeping the containers that are open: a long document is
    /// written and handed on in pieces, each piece's bytes taken before this is called.
    public mutating func removeAllBytes() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// Appends text that already is JSON, as it is.
    public mutating func raw(_ json: String) {
        bytes.append(contentsOf: json.utf8)
    }
}

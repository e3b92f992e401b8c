import Foundation

/// What went wrong while reading JSON text, and where.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong ("Expected a value but the document ended").
    public var message: String
    /// Where it was found in the document.
    public var location: SourceLocation

    /// The message with its line and column.
    public var description: String { "\(message) at line \(location.line), column \(location.column)" }
}

/// A strict JSON parser (RFC 8259) that records the line and column of every value
/// and refuses duplicate keys, documents nested deeper than `maximumDepth` and documents longer than
/// `maximumLength` bytes. Its recursion is bounded by `maximumDepth`, so no document can exhaust the stack.
public struct JSONParser {
    /// How deeply arrays and objects nest at most, by default.
    public static let defaultMaximumDepth = 64
    /// The longest document read, in bytes, by default (8 MiB: a form definition is a few kilobytes).
    public static let defaultMaximumLength = 8 * 1024 * 1024

    /// How deeply arrays and objects may nest before the document is refused.
    public var maximumDepth: Int
    /// How many bytes a document may have before it is refused.
    public var maximumLength: Int

    /// A parser with these limits (by default 64 levels and 8 MiB).
    public init(maximumDepth: Int = JSONParser.defaultMaximumDepth, maximumLength: Int = JSONParser.defaultMaximumLength) {
        self.maximumDepth = maximumDepth
        self.maximumLength = maximumLength
    }

    /// Parses a whole document; trailing content other than whitespace is an error.
    public func parse(_ data: Data) throws(JSONSyntaxError) -> JSONValue.Located {
        guard data.count <= maximumLength else {
            throw JSONSyntaxError(
                message: "The document is \(data.count) bytes long; at most \(maximumLength) are read",
                location: SourceLocation(line: 1, column: 1))
        }
        var reader = Reader(bytes: Array(data), maximumDepth: maximumDepth)
        reader.skipWhitespace()
        let value = try reader.parseValue(depth: 0)
        reader.skipWhitespace()
        if !reader.atEnd {
            throw reader.error("Unexpected content after the end of the JSON document")
        }
        return value
    }

    /// Parses a document given as text.
    public func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue.Located {
        try parse(Data(text.utf8))
    }
}

private struct Reader {
    let bytes: [UInt8]
    let maximumDepth: Int
    var index = 0
    var line = 1
    var column = 1

    init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }  // a UTF-8 byte order mark
    }

    var atEnd: Bool { index >= bytes.count }
    var location: SourceLocation { SourceLocation(line: line, column: column) }

    func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(message: message, location: location)
    }

    mutating func advance() {
        let byte = bytes[index]
        index += 1
        if byte == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1  // count characters, not continuation bytes
        }
    }

    mutating func skipWhitespace() {
        while !atEnd {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: advance()
            default: return
            }
        }
    }

    func describeNext() -> String {
        guard !atEnd else { return "the end of the document" }
        let byte = bytes[index]
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(UnicodeScalar(byte)))'" }
        return String(format: "byte 0x%02X", byte)
    }

    mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue.Located {
        guard !atEnd else { throw error("Expected a value but the document ended") }
        let start = location
        switch bytes[index] {
        case UInt8(ascii: "{"):
            return JSONValue.Located(value: try parseObject(depth: depth + 1), location: start)
        case UInt8(ascii: "["):
            return JSONValue.Located(value: try parseArray(depth: depth + 1), location: start)
        case UInt8(ascii: "\""):
            return JSONValue.Located(value: .string(try parseString()), location: start)
        case UInt8(ascii: "t"):
            try expectWord("true")
            return JSONValue.Located(value: .bool(true), location: start)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return JSONValue.Located(value: .bool(false), location: start)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return JSONValue.Located(value: .null, location: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONValue.Located(value: try parseNumber(), location: start)
        default:
            throw error("Expected a value (object, array, string, number, true, false or null) but found \(describeNext())")
        }
    }

    mutating func expectWord(_ word: String) throws(JSONSyntaxError) {
        let start = location
        for expected in word.utf8 {
            guard !atEnd, bytes[index] == expected else {
                throw JSONSyntaxError(message: "Expected '\(word)' but found \(describeNext())", location: start)
            }
            advance()
        }
    }

    mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        if depth > maximumDepth { throw error("The document nests deeper than \(maximumDepth) levels") }
        advance()  // {
        var members: [JSONValue.Member] = []
        var seen = Set<String>()
        skipWhitespace()
        if !atEnd, bytes[index] == UInt8(ascii: "}") {
            advance()
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard !atEnd, bytes[index] == UInt8(ascii: "\"") else {
                throw error("Expected a quoted key but found \(describeNext())")
            }
            let keyLocation = location
            let key = try parseString()
            if !seen.insert(key).inserted {
                throw JSONSyntaxError(message: "Duplicate key \"\(key)\" in the same object", location: keyLocation)
            }
            skipWhitespace()
            guard !atEnd, bytes[index] == UInt8(ascii: ":") else {
                throw error("Expected ':' after the key \"\(key)\" but found \(describeNext())")
            }
            advance()
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append(JSONValue.Member(key: key, keyLocation: keyLocation, value: value))
            skipWhitespace()
            guard !atEnd else { throw error("The object is not closed: expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") {
                advance()
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                advance()
                return .object(members)
            }
            throw error("Expected ',' or '}' after a member but found \(describeNext())")
        }
    }

    mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        if depth > maximumDepth { throw error("The document nests deeper than \(maximumDepth) levels") }
        advance()  // [
        var items: [JSONValue.Located] = []
        skipWhitespace()
        if !atEnd, bytes[index] == UInt8(ascii: "]") {
            advance()
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth))
            skipWhitespace()
            guard !atEnd else { throw error("The array is not closed: expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                advance()
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                advance()
                return .array(items)
            }
            throw error("Expected ',' or ']' after an item but found \(describeNext())")
        }
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        advance()  // opening quote
        var buffer: [UInt8] = []
        while true {
            guard !atEnd else { throw error("The string is not closed: expected '\"'") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                advance()
                guard let text = String(validating: buffer, as: UTF8.self) else {
                    throw error("The string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                advance()
                guard !atEnd else { throw error("The string ends inside an escape sequence") }
                let escape = bytes[index]
                advance()
                switch escape {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("A high surrogate escape must be followed by a low surrogate escape")
                        }
                        advance()
                        advance()
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("Invalid low surrogate escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw error("A low surrogate escape without a high surrogate")
                    }
                    guard let unicode = UnicodeScalar(scalar) else { throw error("Invalid unicode escape") }
                    buffer.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw error("Unknown escape sequence '\\\(Character(UnicodeScalar(escape)))'")
                }
            default:
                if byte < 0x20 {
                    throw error("A control character must be escaped inside a string")
                }
                buffer.append(byte)
                advance()
            }
        }
    }

    mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard !atEnd else { throw error("The document ends inside a \\u escape") }
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("Expected a hexadecimal digit in a \\u escape but found \(describeNext())")
            }
            value = value * 16 + digit
            advance()
        }
        return value
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { advance() }
        guard !atEnd, isDigit(bytes[index]) else { throw error("Expected a digit but found \(describeNext())") }
        if bytes[index] == UInt8(ascii: "0") {
            advance()
            if !atEnd, isDigit(bytes[index]) { throw error("A number must not start with a leading zero") }
        } else {
            while !atEnd, isDigit(bytes[index]) { advance() }
        }
        if !atEnd, bytes[index] == UInt8(ascii: ".") {
            advance()
            guard !atEnd, isDigit(bytes[index]) else { throw error("Expected a digit after the decimal point") }
            while !atEnd, isDigit(bytes[index]) { advance() }
        }
        if !atEnd, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            advance()
            if !atEnd, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { advance() }
            guard !atEnd, isDigit(bytes[index]) else { throw error("Expected a digit in the exponent") }
            while !atEnd, isDigit(bytes[index]) { advance() }
        }
        let literal = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(literal), value.isFinite else { throw error("The number \(literal) is out of range") }
        return .number(value, literal: literal)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}

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
/// `maximumLength` bytes. It reads with ``JSONReader`` (the one JSON lexer) and builds a tree; its recursion is
/// bounded by `maximumDepth`, so no document can exhaust the stack.
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
        let bytes = Array(data)
        // A UTF-8 byte order mark is skipped.
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var builder = TreeBuilder(reader: JSONReader(bytes, range: start..<bytes.count, maximumDepth: maximumDepth), lines: Lines(offset: start))
        do {
            guard builder.reader.peek() != nil else {
                throw JSONReadError(offset: builder.reader.offset, message: "Expected a value but the document ended")
            }
            let value = try builder.value()
            try builder.reader.finish()
            return value
        } catch let error as JSONSyntaxError {
            throw error
        } catch let error as JSONReadError {
            let message = error.isTooDeep ? "The document nests deeper than \(maximumDepth) levels" : error.message
            throw JSONSyntaxError(message: message, location: builder.lines.location(of: error.offset, in: bytes))
        } catch {
            throw JSONSyntaxError(message: "\(error)", location: builder.lines.location(of: builder.reader.offset, in: bytes))
        }
    }

    /// Parses a document given as text.
    public func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue.Located {
        try parse(Data(text.utf8))
    }
}

/// Line and column of byte offsets that mostly grow: counted on from the last offset asked for.
private struct Lines {
    var offset: Int
    var line = 1
    var column = 1

    mutating func location(of target: Int, in bytes: [UInt8]) -> SourceLocation {
        if target < offset { self = Lines(offset: bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0) }
        while offset < min(target, bytes.count) {
            let byte = bytes[offset]
            offset += 1
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1  // count characters, not continuation bytes
            }
        }
        return SourceLocation(line: line, column: column)
    }
}

/// Builds the located tree from the reader's tokens.
private struct TreeBuilder {
    var reader: JSONReader
    var lines: Lines

    mutating func value() throws -> JSONValue.Located {
        guard let next = reader.peek() else { throw reader.error("Expected a value but the document ended") }
        let location = lines.location(of: reader.offset, in: reader.bytes)
        switch next {
        case UInt8(ascii: "{"):
            try reader.beginObject()
            var members: [JSONValue.Member] = []
            var seen = Set<String>()
            while let key = try reader.nextKey() {
                let keyLocation = lines.location(of: reader.keyOffset, in: reader.bytes)
                guard seen.insert(key).inserted else {
                    throw JSONSyntaxError(message: "Duplicate key \"\(key)\" in the same object", location: keyLocation)
                }
                members.append(JSONValue.Member(key: key, keyLocation: keyLocation, value: try value()))
            }
            return JSONValue.Located(value: .object(members), location: location)
        case UInt8(ascii: "["):
            try reader.beginArray()
            var items: [JSONValue.Located] = []
            while try reader.nextElement() {
                items.append(try value())
            }
            return JSONValue.Located(value: .array(items), location: location)
        case UInt8(ascii: "\""):
            return JSONValue.Located(value: .string(try reader.readString()), location: location)
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return JSONValue.Located(value: .bool(try reader.readBool()), location: location)
        case UInt8(ascii: "n"):
            guard try reader.readNull() else { throw reader.error("Expected null") }
            return JSONValue.Located(value: .null, location: location)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let literal = try reader.readNumberText()
            guard let number = Double(literal), number.isFinite else { throw reader.error("The number \(literal) is out of range") }
            return JSONValue.Located(value: .number(number, literal: literal), location: location)
        default:
            throw reader.error("Expected a value (object, array, string, number, true, false or null), found \(JSONReader.describe(next))")
        }
    }
}

import Foundation

/// A place in a source text, counted from 1.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The line, counting from 1.
    public var line: Int
    /// The column, counting characters (not bytes) from 1.
    public var column: Int

    /// The place at `line` and `column`.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// The place as `line:column`.
    public var description: String { "\(line):\(column)" }
}

/// A JSON document parsed with the location of every value, so errors can name a line and column.
public indirect enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, with its text as written in the document (`2.50`, `1e3`).
    case number(Double, literal: String)
    /// A string, its escapes decoded.
    case string(String)
    /// An array: its items, each with its place.
    case array([Located])
    /// An object: its members in the order written (a document with a duplicate key is refused).
    case object([Member])

    /// A JSON value with the place its first character was found.
    public struct Located: Sendable, Equatable {
        /// The value; the values inside it carry their own places.
        public var value: JSONValue
        /// Where the value's first character is.
        public var location: SourceLocation
    }

    /// One member of an object, in source order; the key's own location is kept for duplicate-key errors.
    public struct Member: Sendable, Equatable {
        /// The member's key, its escapes decoded.
        public var key: String
        /// Where the key's opening quote is.
        public var keyLocation: SourceLocation
        /// The member's value and its place.
        public var value: Located
    }

    /// The value of `key` in an object, or nil.
    public subscript(key: String) -> Located? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// A short name of the JSON type, as JSON Schema names it.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number(let value, _): return value.rounded() == value && abs(value) < 9e15 ? "integer" : "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

import Foundation

/// A place in a source text, counted from 1.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }
}

/// A JSON document parsed with the location of every value, so errors can name a line and column.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double, literal: String)
    case string(String)
    case array([Located])
    case object([Member])

    /// A JSON value with the place its first character was found.
    public struct Located: Sendable, Equatable {
        public var value: JSONValue
        public var location: SourceLocation
    }

    /// One member of an object, in source order; the key's own location is kept for duplicate-key errors.
    public struct Member: Sendable, Equatable {
        public var key: String
        public var keyLocation: SourceLocation
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

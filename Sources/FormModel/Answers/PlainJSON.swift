import Foundation

/// An untyped JSON value, for defaults and other places where a field's plain JSON form is written.
public enum PlainJSON: Codable, Sendable, Hashable {
    /// JSON `null`.
    case null
    /// JSON `true` or `false`.
    case bool(Bool)
    /// A JSON number, whole or not.
    case number(Double)
    /// A JSON string.
    case string(String)
    /// A JSON array, in order.
    case array([PlainJSON])
    /// A JSON object; the order of its members is not kept.
    case object([String: PlainJSON])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([PlainJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: PlainJSON].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension PlainJSON {
    /// Converts a parsed, located JSON value, dropping the locations.
    public init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(let number, _): self = .number(number)
        case .string(let text): self = .string(text)
        case .array(let items): self = .array(items.map { PlainJSON($0.value) })
        case .object(let members):
            self = .object(Dictionary(members.map { ($0.key, PlainJSON($0.value.value)) }, uniquingKeysWith: { first, _ in first }))
        }
    }
}

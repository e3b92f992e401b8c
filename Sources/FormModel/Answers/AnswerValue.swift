import Foundation

/// A typed answer to one field, or the raw text a person typed that does not (yet) fit the field.
///
/// Raw input is kept so nothing a person typed is ever thrown away; validation reports it and
/// gates completion only.
public enum AnswerValue: Sendable, Hashable {
    /// The answer of a `text` or `multilineText` field; of a `trace` or `shape` field, its points as ODK writes
    /// them (`Geometry`).
    case text(String)
    /// The answer of an `integer` field; a `decimal` field accepts it too.
    case integer(Int)
    /// The answer of a `decimal` field, exact; its stored form writes it as a string (`{"decimal": "2.5"}`) so no
    /// digit is lost.
    case decimal(Decimal)
    /// The answer of a `boolean` field: true for yes.
    case boolean(Bool)
    /// `YYYY-MM-DD`.
    case date(String)
    /// `HH:MM` (24-hour).
    case time(String)
    /// `YYYY-MM-DDTHH:MM`, local to where it was recorded.
    case dateTime(String)
    /// The value (not the label) of the option chosen in a `singleChoice` field.
    case choice(String)
    /// The values of the options chosen in a `multipleChoice` field; of a `rank` field, every option in the
    /// order the person put them.
    case choices([String])
    /// The answer of a `location` field.
    case location(Location)
    /// The answer of a `photo`, `audio` or `file` field: a reference to the file's bytes, stored apart.
    case attachment(AttachmentReference)
    /// Text as typed that is not a valid answer for the field's kind.
    case raw(String)
    /// The answer of a sensitive field, sealed on the device to the project's public key: only the key's
    /// holder reads it.
    case sealed(SealedAnswer)

    /// The tag used in the stored and wire form (`{"integer": 3}`).
    public var tag: String {
        switch self {
        case .text: return "text"
        case .integer: return "integer"
        case .decimal: return "decimal"
        case .boolean: return "boolean"
        case .date: return "date"
        case .time: return "time"
        case .dateTime: return "dateTime"
        case .choice: return "choice"
        case .choices: return "choices"
        case .location: return "location"
        case .attachment: return "attachment"
        case .raw: return "raw"
        case .sealed: return "sealed"
        }
    }

    /// Whether this value has the shape `kind` expects; raw input fits every kind as a draft.
    public func fits(_ kind: FieldKind) -> Bool {
        switch (self, kind) {
        case (.raw, _), (.sealed, _): return kind.takesAnswer
        case (.text, .text), (.text, .multilineText), (.text, .trace), (.text, .shape): return true
        case (.integer, .integer), (.decimal, .decimal), (.integer, .decimal): return true
        case (.boolean, .boolean), (.date, .date), (.time, .time), (.dateTime, .dateTime): return true
        case (.choice, .singleChoice), (.choices, .multipleChoice), (.choices, .rank), (.location, .location): return true
        case (.attachment, let kind): return kind.takesAttachment
        default: return false
        }
    }

    /// Whether this answer holds nothing a person would call content (empty or blank text, no choices).
    public var isBlank: Bool {
        switch self {
        case .text(let text), .raw(let text): return text.allSatisfy(\.isWhitespace)
        case .choices(let values): return values.isEmpty
        default: return false
        }
    }

    /// The answer as a person reads it ("High", "yes", "52.52, 13.4 ±5 m"); a choice by its label in
    /// `language` (nil: the form's default language).
    public func display(for field: FieldDefinition? = nil, language: String? = nil) -> String {
        switch self {
        case .text(let text), .raw(let text): return text
        case .integer(let value): return String(value)
        case .decimal(let value): return "\(value)"
        case .boolean(let value): return value ? "yes" : "no"
        case .date(let text), .time(let text): return text
        case .dateTime(let text): return text.replacingOccurrences(of: "T", with: " ")
        case .choice(let value): return field?.label(ofChoice: value, in: language) ?? value
        case .choices(let values): return values.map { field?.label(ofChoice: $0, in: language) ?? $0 }.joined(separator: ", ")
        case .location(let location):
            let accuracy = location.accuracy.map { " ±\(Self.format($0)) m" } ?? ""
            return "\(Self.format(location.latitude)), \(Self.format(location.longitude))\(accuracy)"
        case .attachment(let reference): return reference.display
        case .sealed: return Self.sealedDisplay
        }
    }

    /// How a sealed answer is shown wherever its value cannot be read: the console, the OData feed, GeoJSON,
    /// an export without the key, another device.
    public static let sealedDisplay = "sensitive — encrypted"

    /// Every tag an answer may have, for messages that list them.
    public static let tags = "text, integer, decimal, boolean, date, time, dateTime, choice, choices, location, attachment, raw, sealed"

    static func format(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

extension AnswerValue: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "An answer is an object with exactly one key naming its type, like {\"integer\": 3}"))
        }
        switch key.stringValue {
        case "text": self = .text(try container.decode(String.self, forKey: key))
        case "integer": self = .integer(try container.decode(Int.self, forKey: key))
        case "decimal":
            let text = try container.decode(String.self, forKey: key)
            guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "Not a decimal number: \(text)")
            }
            self = .decimal(value)
        case "boolean": self = .boolean(try container.decode(Bool.self, forKey: key))
        case "date": self = .date(try container.decode(String.self, forKey: key))
        case "time": self = .time(try container.decode(String.self, forKey: key))
        case "dateTime": self = .dateTime(try container.decode(String.self, forKey: key))
        case "choice": self = .choice(try container.decode(String.self, forKey: key))
        case "choices": self = .choices(try container.decode([String].self, forKey: key))
        case "location": self = .location(try container.decode(Location.self, forKey: key))
        case "attachment": self = .attachment(try container.decode(AttachmentReference.self, forKey: key))
        case "raw": self = .raw(try container.decode(String.self, forKey: key))
        case "sealed": self = .sealed(try container.decode(SealedAnswer.self, forKey: key))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container,
                debugDescription: "Unknown answer type \"\(key.stringValue)\"; expected one of \(Self.tags)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        let key = Key(tag)
        switch self {
        case .text(let text), .date(let text), .time(let text), .dateTime(let text), .choice(let text), .raw(let text):
            try container.encode(text, forKey: key)
        case .integer(let value): try container.encode(value, forKey: key)
        case .decimal(let value): try container.encode("\(value)", forKey: key)
        case .boolean(let value): try container.encode(value, forKey: key)
        case .choices(let values): try container.encode(values, forKey: key)
        case .location(let location): try container.encode(location, forKey: key)
        case .attachment(let reference): try container.encode(reference, forKey: key)
        case .sealed(let sealed): try container.encode(sealed, forKey: key)
        }
    }
}

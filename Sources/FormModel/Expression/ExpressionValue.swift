import Foundation

/// A value while an expression is evaluated.
public enum ExpressionValue: Sendable, Hashable {
    /// No value: an unanswered or hidden field, `null`, or an operation with no result (a division by zero).
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number; integer and decimal answers alike.
    case number(Double)
    /// Text: a text, choice, time or location answer, or a text literal.
    case string(String)
    /// `YYYY-MM-DD`.
    case date(String)
    /// `YYYY-MM-DDTHH:MM`.
    case dateTime(String)
    /// A list: a multiple-choice answer, a field read across a repeat's instances, or a list literal.
    case list([ExpressionValue])
    /// The evaluation could not finish (too much work); what happened, in words.
    case failure(String)

    init(_ literal: FormExpression.Literal) {
        switch literal {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(let number): self = .number(number)
        case .string(let text): self = .string(text)
        }
    }

    /// The value an answer stands for in an expression (nil: unanswered).
    public init(_ answer: AnswerValue?) {
        switch answer {
        case nil: self = .null
        case .text(let text)?, .raw(let text)?, .time(let text)?, .choice(let text)?:
            self = text.isEmpty ? .null : .string(text)
        case .date(let text)?: self = .date(text)
        case .dateTime(let text)?: self = .dateTime(text)
        case .integer(let value)?: self = .number(Double(value))
        case .decimal(let value)?: self = .number(NSDecimalNumber(decimal: value).doubleValue)
        case .boolean(let flag)?: self = .bool(flag)
        case .choices(let values)?: self = .list(values.map(ExpressionValue.string))
        case .location(let location)?: self = .string(AnswerValue.location(location).display())
        case .attachment(let reference)?: self = .string(reference.name)
        // Nothing can read a sealed value where it is sealed; the linter keeps expressions off sensitive fields.
        case .sealed?: self = .null
        }
    }

    /// The answer a computed value is stored and shown as for a field of `kind` (`calculate`: its natural
    /// type); nil when the value is null, failed, or does not fit the kind.
    public func answer(for kind: FieldKind) -> AnswerValue? {
        switch (self, kind) {
        case (.null, _), (.failure, _): return nil
        case (.number(let number), .integer):
            guard number.isFinite, abs(number) < 9e15 else { return nil }
            return .integer(Int(number.rounded()))
        case (.number(let number), .decimal):
            return number.isFinite ? .decimal(Self.decimal(number)) : nil
        case (.number(let number), .calculate):
            guard number.isFinite else { return nil }
            return number.rounded() == number && abs(number) < 9e15 ? .integer(Int(number)) : .decimal(Self.decimal(number))
        case (.number, .text), (.number, .multilineText), (.bool, .text), (.bool, .multilineText):
            return .text(text)
        case (.string(let text), .text), (.string(let text), .multilineText), (.string(let text), .calculate):
            return .text(text)
        case (.bool(let flag), .boolean), (.bool(let flag), .calculate): return .boolean(flag)
        case (.date(let text), .date), (.date(let text), .calculate): return .date(text)
        case (.string(let text), .date) where LocalDateTime.isDate(text): return .date(text)
        case (.dateTime(let text), .dateTime), (.dateTime(let text), .calculate): return .dateTime(text)
        case (.date(let text), .text), (.dateTime(let text), .text): return .text(text)
        case (.string(let text), .singleChoice): return .choice(text)
        case (.string(let text), .trace), (.string(let text), .shape):
            return (try? Geometry(parsing: text, for: kind)).map { .text($0.text) }
        case (.list(let items), .multipleChoice), (.list(let items), .rank), (.list(let items), .calculate):
            return .choices(items.compactMap { if case .string(let text) = $0 { return text } else { return nil } })
        default: return nil
        }
    }

    static func decimal(_ number: Double) -> Decimal {
        Decimal(string: String(number), locale: Locale(identifier: "en_US_POSIX")) ?? Decimal(number)
    }

    /// Whether the value counts as true in a condition: anything but null, a failure, false, 0, empty text and an
    /// empty list.
    public var isTruthy: Bool {
        switch self {
        case .null, .failure: return false
        case .bool(let flag): return flag
        case .number(let number): return number != 0 && !number.isNaN
        case .string(let text), .date(let text), .dateTime(let text): return !text.isEmpty
        case .list(let items): return !items.isEmpty
        }
    }

    var isNull: Bool { if case .null = self { return true } else { return false } }

    /// Numbers written as text ("3") count as numbers; booleans as 1 and 0.
    var asNumber: Double? {
        switch self {
        case .number(let number): return number
        case .string(let text): return Double(text.trimmingCharacters(in: .whitespaces))
        case .bool(let flag): return flag ? 1 : 0
        default: return nil
        }
    }

    /// How the value reads inside `concat()` and as text.
    var text: String {
        switch self {
        case .null, .failure: return ""
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number): return AnswerValue.format(number)
        case .string(let text), .date(let text), .dateTime(let text): return text
        case .list(let items): return items.map(\.text).joined(separator: " ")
        }
    }

    /// Whether two values are equal. An unanswered field equals the empty text, as an empty answer does in
    /// XPath: XLSForm's `${x} = ''` holds, and `${x} != ''` fails, until `x` is answered.
    func equals(_ other: ExpressionValue) -> Bool {
        switch (self, other) {
        case (.null, .string(let text)), (.string(let text), .null): return text.isEmpty
        case (.number(let left), .number(let right)): return left == right
        case (.number(let left), .string), (.number(let left), .bool): return other.asNumber == left
        case (.string, .number(let right)), (.bool, .number(let right)): return asNumber == right
        case (.date(let left), .dateTime(let right)), (.dateTime(let right), .date(let left)): return right.hasPrefix(left) && right.count == left.count
        case (.date(let text), .string(let literal)), (.string(let literal), .date(let text)),
             (.dateTime(let text), .string(let literal)), (.string(let literal), .dateTime(let text)):
            return text == literal
        default: return self == other
        }
    }

    /// The order of two values: numbers by value, dates and times by their calendar order, text by text; nil when
    /// they do not compare (an unanswered field, a list).
    func order(against other: ExpressionValue) -> ComparisonResult? {
        switch (self, other) {
        case (.null, _), (_, .null), (.list, _), (_, .list), (.failure, _), (_, .failure): return nil
        case (.date(let left), .dateTime(let right)): return Self.compare(left, String(right.prefix(10)))
        case (.dateTime(let left), .date(let right)): return Self.compare(String(left.prefix(10)), right)
        case (.date(let left), _), (.dateTime(let left), _):
            guard case .string(let right) = other else {
                if case .date(let right) = other { return Self.compare(left, right) }
                if case .dateTime(let right) = other { return Self.compare(left, right) }
                return nil
            }
            return Self.compare(left, right)
        case (_, .date(let right)), (_, .dateTime(let right)):
            guard case .string(let left) = self else { return nil }
            return Self.compare(left, right)
        default:
            if let left = asNumber, let right = other.asNumber {
                return left < right ? .orderedAscending : left > right ? .orderedDescending : .orderedSame
            }
            if case .string(let left) = self, case .string(let right) = other { return Self.compare(left, right) }
            return nil
        }
    }

    static func compare(_ left: String, _ right: String) -> ComparisonResult {
        left < right ? .orderedAscending : left > right ? .orderedDescending : .orderedSame
    }
}

import Foundation

/// A value while a relevance expression is evaluated.
enum RelevanceValue: Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case list([RelevanceValue])

    init(_ literal: RelevanceExpression.Literal) {
        switch literal {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(let number): self = .number(number)
        case .string(let text): self = .string(text)
        }
    }

    init(_ answer: AnswerValue?) {
        switch answer {
        case nil: self = .null
        case .text(let text)?, .raw(let text)?, .date(let text)?, .time(let text)?, .dateTime(let text)?, .choice(let text)?:
            self = text.isEmpty ? .null : .string(text)
        case .integer(let value)?: self = .number(Double(value))
        case .decimal(let value)?: self = .number(NSDecimalNumber(decimal: value).doubleValue)
        case .boolean(let flag)?: self = .bool(flag)
        case .choices(let values)?: self = .list(values.map(RelevanceValue.string))
        case .location(let location)?: self = .string(AnswerValue.location(location).display())
        }
    }

    var isTruthy: Bool {
        switch self {
        case .null: return false
        case .bool(let flag): return flag
        case .number(let number): return number != 0
        case .string(let text): return !text.isEmpty
        case .list(let items): return !items.isEmpty
        }
    }

    /// Numbers written as text ("3") compare as numbers with numbers.
    var asNumber: Double? {
        switch self {
        case .number(let number): return number
        case .string(let text): return Double(text)
        default: return nil
        }
    }

    func equals(_ other: RelevanceValue) -> Bool {
        switch (self, other) {
        case (.number(let left), _): return other.asNumber == left
        case (_, .number(let right)): return asNumber == right
        default: return self == other
        }
    }
}

extension RelevanceExpression {
    /// Evaluates the condition given the answers of the fields it names (absent = unanswered).
    public func isSatisfied(by answers: [String: AnswerValue]) -> Bool {
        evaluate { RelevanceValue(answers[$0]) }.isTruthy
    }

    func evaluate(_ lookup: (String) -> RelevanceValue) -> RelevanceValue {
        switch self {
        case .field(let name): return lookup(name)
        case .literal(let literal): return RelevanceValue(literal)
        case .list(let items): return .list(items.map(RelevanceValue.init))
        case .not(let inner): return .bool(!inner.evaluate(lookup).isTruthy)
        case .and(let left, let right): return .bool(left.evaluate(lookup).isTruthy && right.evaluate(lookup).isTruthy)
        case .or(let left, let right): return .bool(left.evaluate(lookup).isTruthy || right.evaluate(lookup).isTruthy)
        case .membership(let element, let container):
            let needle = element.evaluate(lookup)
            guard case .list(let items) = container.evaluate(lookup) else { return .bool(false) }
            if case .list(let needles) = needle {
                return .bool(!needles.isEmpty && needles.allSatisfy { wanted in items.contains { $0.equals(wanted) } })
            }
            return .bool(items.contains { $0.equals(needle) })
        case .compare(let leftExpression, let comparison, let rightExpression):
            let left = leftExpression.evaluate(lookup)
            let right = rightExpression.evaluate(lookup)
            switch comparison {
            case .equal: return .bool(left.equals(right))
            case .notEqual: return .bool(!left.equals(right))
            case .less, .lessOrEqual, .greater, .greaterOrEqual:
                let order: ComparisonResult
                if let leftNumber = left.asNumber, let rightNumber = right.asNumber {
                    order = leftNumber < rightNumber ? .orderedAscending : leftNumber > rightNumber ? .orderedDescending : .orderedSame
                } else if case .string(let leftText) = left, case .string(let rightText) = right {
                    order = leftText < rightText ? .orderedAscending : leftText > rightText ? .orderedDescending : .orderedSame
                } else {
                    return .bool(false)  // comparing with an unanswered field is never true
                }
                switch comparison {
                case .less: return .bool(order == .orderedAscending)
                case .lessOrEqual: return .bool(order != .orderedDescending)
                case .greater: return .bool(order == .orderedDescending)
                default: return .bool(order != .orderedAscending)
                }
            }
        }
    }
}

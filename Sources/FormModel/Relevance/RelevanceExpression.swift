import Foundation

/// A parsed `relevant` condition: a small language over other fields' answers, evaluated
/// by walking this tree (never by anything like `eval`).
///
/// Grammar:
/// ```
/// expression := or
/// or         := and (("or" | "||") and)*
/// and        := not (("and" | "&&") not)*
/// not        := ("not" | "!") not | comparison
/// comparison := operand (("==" | "!=" | "<" | "<=" | ">" | ">=") operand | "in" operand)?
/// operand    := field | 'text' | "text" | number | true | false | null | "[" literal, … "]" | "(" expression ")"
/// ```
/// A field's name stands for its answer (null when unanswered or not itself relevant).
/// `x in [..]` tests membership; `'a' in tags` tests whether a multiple-choice answer holds `a`.
public indirect enum RelevanceExpression: Sendable, Hashable {
    case field(String)
    case literal(Literal)
    case list([Literal])
    case not(RelevanceExpression)
    case and(RelevanceExpression, RelevanceExpression)
    case or(RelevanceExpression, RelevanceExpression)
    case compare(RelevanceExpression, ComparisonOperator, RelevanceExpression)
    case membership(RelevanceExpression, in: RelevanceExpression)

    /// A constant written in an expression.
    public enum Literal: Sendable, Hashable {
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
    }

    public enum ComparisonOperator: String, Sendable, Hashable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
    }

    /// Every field name the expression reads, in order of first appearance.
    public var referencedFields: [String] {
        var names: [String] = []
        collect(into: &names)
        return names
    }

    private func collect(into names: inout [String]) {
        switch self {
        case .field(let name): if !names.contains(name) { names.append(name) }
        case .literal, .list: break
        case .not(let inner): inner.collect(into: &names)
        case .and(let left, let right), .or(let left, let right), .compare(let left, _, let right), .membership(let left, let right):
            left.collect(into: &names)
            right.collect(into: &names)
        }
    }
}

/// Why a `relevant` expression could not be read, with the 1-based column in the expression.
public struct RelevanceSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var column: Int

    public var description: String { "\(message) (column \(column))" }
}

import Foundation

/// A parsed expression of a form: a `relevant` condition, a `calculation`, a `constraint`, a `choiceFilter`
/// or a default. Parsed once (`parse(_:)`) and evaluated by walking this tree, never by anything like `eval`.
///
/// Grammar:
/// ```
/// expression := or
/// or         := and (("or" | "||") and)*
/// and        := not (("and" | "&&") not)*
/// not        := ("not" | "!") not | comparison
/// comparison := sum (("==" | "!=" | "<" | "<=" | ">" | ">=") sum | "in" sum)?
/// sum        := product (("+" | "-") product)*
/// product    := unary (("*" | "/" | "%") unary)*
/// unary      := "-" unary | operand
/// operand    := name ("." name)* | function "(" expression, … ")" | "." | 'text' | "text" | number
///             | true | false | null | "[" literal, … "]" | "(" expression ")"
/// ```
/// A field's name stands for its answer (null when unanswered or not itself relevant). Inside a repeat, a
/// name means the field of the same instance; `defects.cost` outside it is the list of every instance's
/// `cost`, for `sum()` and `count()`. `.` is the value of the field the expression belongs to (constraints).
/// In a `choiceFilter`, `choice.value`, `choice.label` and `choice.<property>` read the choice being tested.
public indirect enum FormExpression: Sendable, Hashable {
    /// A field (`severity`) or a path through a repeat (`defects.cost`).
    case name([String])
    /// `.`: the value of the field the expression belongs to.
    case current
    case literal(Literal)
    case list([Literal])
    case not(FormExpression)
    case negate(FormExpression)
    case and(FormExpression, FormExpression)
    case or(FormExpression, FormExpression)
    case compare(FormExpression, ComparisonOperator, FormExpression)
    case membership(FormExpression, in: FormExpression)
    /// `a + b - c`: a chain kept flat, so a long sum needs no deep tree.
    case arithmetic(FormExpression, [ArithmeticStep])
    case call(Function, [FormExpression])

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

    public enum ArithmeticOperator: String, Sendable, Hashable {
        case add = "+"
        case subtract = "-"
        case multiply = "*"
        case divide = "/"
        case remainder = "%"
    }

    /// One operator and its right operand in an arithmetic chain.
    public struct ArithmeticStep: Sendable, Hashable {
        public var operation: ArithmeticOperator
        public var operand: FormExpression
    }

    /// The functions an expression may call, by the name written.
    public enum Function: String, Sendable, Hashable, CaseIterable {
        case `if` = "if"
        case coalesce
        case selected
        case countSelected = "count-selected"
        case stringLength = "string-length"
        case concat
        case today
        case now
        case sum
        case count
        case min
        case max
        case round

        /// How many arguments the function takes.
        var arity: ClosedRange<Int> {
            switch self {
            case .if: return 3...3
            case .coalesce: return 2...16
            case .selected: return 2...2
            case .countSelected, .stringLength, .sum, .count: return 1...1
            case .concat: return 1...64
            case .today, .now: return 0...0
            case .min, .max: return 1...16
            case .round: return 1...2
            }
        }

        /// How a call looks, for messages.
        var signature: String {
            switch self {
            case .if: return "if(condition, then, else)"
            case .coalesce: return "coalesce(a, b, …)"
            case .selected: return "selected(field, 'value')"
            case .countSelected: return "count-selected(field)"
            case .stringLength: return "string-length(text)"
            case .concat: return "concat(a, b, …)"
            case .today: return "today()"
            case .now: return "now()"
            case .sum: return "sum(group.field)"
            case .count: return "count(group)"
            case .min: return "min(a, b, …)"
            case .max: return "max(a, b, …)"
            case .round: return "round(number, digits)"
            }
        }
    }

    /// Every name the expression reads, in order of first appearance (`defects.cost` as "defects.cost").
    public var referencedNames: [[String]] {
        var names: [[String]] = []
        visit { expression in
            if case .name(let path) = expression, !names.contains(path) { names.append(path) }
        }
        return names
    }

    /// Every field name the expression reads (the first part of each path), in order of first appearance.
    public var referencedFields: [String] {
        var names: [String] = []
        for path in referencedNames where !names.contains(path[0]) { names.append(path[0]) }
        return names
    }

    /// Whether the expression calls `function` anywhere.
    public func calls(_ function: Function) -> Bool {
        var found = false
        visit { if case .call(function, _) = $0 { found = true } }
        return found
    }

    /// Calls `body` for this node and every node below it (depth first; the tree is shallow by construction).
    public func visit(_ body: (FormExpression) -> Void) {
        body(self)
        switch self {
        case .name, .current, .literal, .list: break
        case .not(let inner), .negate(let inner): inner.visit(body)
        case .and(let left, let right), .or(let left, let right), .compare(let left, _, let right), .membership(let left, let right):
            left.visit(body)
            right.visit(body)
        case .arithmetic(let first, let steps):
            first.visit(body)
            for step in steps { step.operand.visit(body) }
        case .call(_, let arguments):
            for argument in arguments { argument.visit(body) }
        }
    }
}

/// Why an expression could not be read, with the 1-based column in the expression.
public struct ExpressionSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var column: Int

    public var description: String { "\(message) (column \(column))" }
}

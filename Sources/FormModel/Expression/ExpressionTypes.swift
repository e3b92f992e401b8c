/// What the linter can see of an expression's type, to report mismatches before a form is published.
public enum ExpressionType: Sendable, Hashable, CustomStringConvertible {
    /// Not known before evaluation (`null`, a `calculate` field's value); fits everywhere.
    case any
    /// A number (the answer of an `integer` or `decimal` field).
    case number
    /// Yes or no (a `boolean` answer, a condition).
    case bool
    /// Text (the answer of a text, choice, time or location field).
    case text
    /// A date, `YYYY-MM-DD`.
    case date
    /// A date and time, `YYYY-MM-DDTHH:MM`.
    case dateTime
    /// A list (a multiple choice, or a field read across a repeat's instances) of items of one type.
    case list(Item)

    /// The type of a list's items.
    public enum Item: Sendable, Hashable {
        /// Item types, each meaning what the `ExpressionType` case of the same name means.
        case any, number, bool, text, date, dateTime
    }

    /// The type answers of `kind` have in expressions (`calculate`: unknown until its expression is read).
    public init(kind: FieldKind) {
        switch kind {
        case .integer, .decimal: self = .number
        case .boolean: self = .bool
        case .text, .multilineText, .singleChoice, .time, .location, .trace, .shape, .note, .photo, .audio, .file: self = .text
        case .date: self = .date
        case .dateTime: self = .dateTime
        case .multipleChoice, .rank: self = .list(.text)
        case .calculate: self = .any
        case .repeat: self = .list(.bool)
        }
    }

    var asItem: Item {
        switch self {
        case .any, .list: return .any
        case .number: return .number
        case .bool: return .bool
        case .text: return .text
        case .date: return .date
        case .dateTime: return .dateTime
        }
    }

    /// The type as findings name it ("a number", "yes or no").
    public var description: String {
        switch self {
        case .any: return "a value"
        case .number: return "a number"
        case .bool: return "yes or no"
        case .text: return "text"
        case .date: return "a date"
        case .dateTime: return "a date and time"
        case .list: return "a list"
        }
    }

    /// Whether a value of this type can be stored in a field of `kind`.
    func fits(_ kind: FieldKind) -> Bool {
        switch (self, kind) {
        case (.any, _), (_, .calculate): return true
        case (.number, .integer), (.number, .decimal), (.bool, .boolean), (.date, .date), (.dateTime, .dateTime): return true
        case (_, .text), (_, .multilineText): return true
        case (.text, .date): return true  // a date written as text
        case (.text, .singleChoice), (.list, .multipleChoice), (.list, .rank), (.text, .trace), (.text, .shape): return true
        default: return false
        }
    }
}

extension FormExpression {
    /// The type of the expression given the types of names (nil: unknown name), and every mismatch the types
    /// show, as sentences ("adds the text field site to a number").
    public func inferType(_ typeOf: ([String]) -> ExpressionType?) -> (type: ExpressionType, mismatches: [String]) {
        var mismatches: [String] = []
        let type = infer(typeOf, &mismatches)
        return (type, mismatches)
    }

    private func describe() -> String {
        switch self {
        case .name(let path): return path.joined(separator: ".")
        case .literal(.string(let text)): return "'\(text)'"
        case .literal(.number(let number)): return AnswerValue.format(number)
        case .current: return "."
        case .call(let function, _): return function.rawValue + "(…)"
        case .entity(let list, _, let property): return "entity('\(list)', …, '\(property)')"
        default: return "the expression"
        }
    }

    private func infer(_ typeOf: ([String]) -> ExpressionType?, _ mismatches: inout [String]) -> ExpressionType {
        switch self {
        case .name(let path): return typeOf(path) ?? .any
        case .current: return typeOf(["."]) ?? .any
        case .literal(.string): return .text
        case .literal(.number): return .number
        case .literal(.bool): return .bool
        case .literal(.null): return .any
        case .list: return .list(.any)
        case .not(let inner):
            _ = inner.infer(typeOf, &mismatches)
            return .bool
        case .negate(let inner):
            let type = inner.infer(typeOf, &mismatches)
            if ![.any, .number].contains(type) { mismatches.append("negates \(inner.describe()), which is \(type), not a number") }
            return .number
        case .and(let left, let right), .or(let left, let right), .membership(let left, let right):
            _ = left.infer(typeOf, &mismatches)
            _ = right.infer(typeOf, &mismatches)
            return .bool
        case .compare(let left, let comparison, let right):
            let a = left.infer(typeOf, &mismatches)
            let b = right.infer(typeOf, &mismatches)
            if comparison != .equal, comparison != .notEqual, !Self.comparable(a, b, left, right) {
                mismatches.append("compares \(left.describe()) (\(a)) with \(right.describe()) (\(b)), which have no order between them")
            }
            return .bool
        case .arithmetic(let first, let steps):
            var result = first.infer(typeOf, &mismatches)
            var previous = first
            for step in steps {
                let type = step.operand.infer(typeOf, &mismatches)
                if result == .date, [.add, .subtract].contains(step.operation), type == .number || type == .any {
                    result = .date
                } else if result == .date, step.operation == .subtract, type == .date {
                    result = .number
                } else {
                    for (operand, operandType) in [(previous, result), (step.operand, type)] where ![.any, .number].contains(operandType) {
                        mismatches.append("uses \(operand.describe()), which is \(operandType), in '\(step.operation.rawValue)'; arithmetic needs numbers")
                    }
                    result = .number
                }
                previous = step.operand
            }
            return result
        case .entity(_, let id, _):
            _ = id.infer(typeOf, &mismatches)
            return .any
        case .call(let function, let arguments):
            let types = arguments.map { $0.infer(typeOf, &mismatches) }
            switch function {
            case .if: return types[1] == types[2] ? types[1] : .any
            case .coalesce: return types.first { $0 != .any } ?? .any
            case .selected: return .bool
            case .countSelected, .stringLength, .count, .round, .min, .max: return .number
            case .sum:
                switch types[0] {
                case .list(.any), .list(.number), .number, .any: break
                case let other: mismatches.append("sums \(arguments[0].describe()), which is \(other)\(Self.itemWords(other)); sum() needs numbers")
                }
                return .number
            case .concat: return .text
            case .today: return .date
            case .now: return .dateTime
            case .sqrt, .pow, .int, .number: return .number
            case .sin, .cos, .tan, .asin, .acos, .atan, .exp, .log, .log10, .pi, .position: return .number
            case .string, .substr, .normalizeSpace: return .text
            case .contains, .startsWith, .endsWith, .booleanFromString, .regex: return .bool
            case .date: return .date
            case .decimalDateTime, .countNonEmpty, .area, .distance: return .number
            case .formatDate, .formatDateTime, .choiceLabel: return .text
            case .uuid: return .text
            case .once: return types[0]
            case .indexedRepeat:
                if case .list(let item) = types[0] { return .from(item) }
                return types[0]
            }
        }
    }

    private static func itemWords(_ type: ExpressionType) -> String {
        if case .list(let item) = type, item != .any { return " of " + ExpressionType.from(item).description }
        return ""
    }

    private static func comparable(_ a: ExpressionType, _ b: ExpressionType, _ left: FormExpression, _ right: FormExpression) -> Bool {
        switch (a, b) {
        case (.any, _), (_, .any): return true
        case (.number, .number), (.text, .text), (.date, .date), (.dateTime, .dateTime), (.date, .dateTime), (.dateTime, .date): return true
        case (.date, .text), (.text, .date), (.dateTime, .text), (.text, .dateTime): return true  // '2026-12-01'
        case (.number, .text):
            if case .literal(.string(let text)) = right { return Double(text) != nil }
            return true
        case (.text, .number):
            if case .literal(.string(let text)) = left { return Double(text) != nil }
            return true
        default: return false
        }
    }
}

extension ExpressionType {
    static func from(_ item: Item) -> ExpressionType {
        switch item {
        case .any: return .any
        case .number: return .number
        case .bool: return .bool
        case .text: return .text
        case .date: return .date
        case .dateTime: return .dateTime
        }
    }
}

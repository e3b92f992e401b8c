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
/// operand    := name ("." name)* | function "(" expression, … ")" | "entity" "(" 'list', expression, 'property' ")"
///             | "." | 'text' | "text" | number
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
    /// A constant: text, a number, `true`, `false` or `null`.
    case literal(Literal)
    /// A list of constants, `['high', 'critical']`, for `in`.
    case list([Literal])
    /// `not a` (or `!a`): true when `a` is not truthy.
    case not(FormExpression)
    /// `-a`: the number negated; null when `a` is not a number.
    case negate(FormExpression)
    /// `a and b` (or `&&`): `b` is evaluated only when `a` is true.
    case and(FormExpression, FormExpression)
    /// `a or b` (or `||`): `b` is evaluated only when `a` is false.
    case or(FormExpression, FormExpression)
    /// `a == b`, `a < b`, …; an ordering with an unanswered side is false.
    case compare(FormExpression, ComparisonOperator, FormExpression)
    /// `a in b`: whether the list `b` holds `a` (every item of `a`, when `a` is a non-empty list).
    case membership(FormExpression, in: FormExpression)
    /// `a + b - c`: a chain kept flat, so a long sum needs no deep tree.
    case arithmetic(FormExpression, [ArithmeticStep])
    /// A call of a built-in function with its arguments.
    case call(Function, [FormExpression])
    /// `entity('households', household, 'members')`: the property `members` of the entity of the list
    /// `households` whose id is the value of `household` (XLSForm's
    /// `instance('households')/root/item[name = ${household}]/members`); `'label'` reads its label. It reads
    /// nothing (null) until the device holds entity lists (docs/entity-lists.md).
    case entity(list: String, id: FormExpression, property: String)

    /// A constant written in an expression.
    public enum Literal: Sendable, Hashable {
        /// Text, written in single or double quotes.
        case string(String)
        /// A number.
        case number(Double)
        /// `true` or `false`.
        case bool(Bool)
        /// `null`: no value, as an unanswered field has.
        case null
    }

    /// The comparison operators, by the symbol written.
    public enum ComparisonOperator: String, Sendable, Hashable {
        /// `==`: the same value; a number equals the same number written as text, a date the same date written as
        /// text.
        case equal = "=="
        /// `!=`: not the same value.
        case notEqual = "!="
        /// `<`: earlier in order: numbers by value, dates and times by the calendar, text by text.
        case less = "<"
        /// `<=`: earlier in order, or the same.
        case lessOrEqual = "<="
        /// `>`: later in order.
        case greater = ">"
        /// `>=`: later in order, or the same.
        case greaterOrEqual = ">="
    }

    /// The arithmetic operators, by the symbol written.
    public enum ArithmeticOperator: String, Sendable, Hashable {
        /// `+`: the sum; a date plus a number of days is a date.
        case add = "+"
        /// `-`: the difference; a date minus days is a date, a date minus a date the days between them.
        case subtract = "-"
        /// `*`: the product.
        case multiply = "*"
        /// `/`: the quotient; null when dividing by zero.
        case divide = "/"
        /// `%`: the remainder of the division, with the sign of the left side; null when dividing by zero.
        case remainder = "%"
    }

    /// One operator and its right operand in an arithmetic chain.
    public struct ArithmeticStep: Sendable, Hashable {
        /// The operator joining the result so far and `operand`.
        public var operation: ArithmeticOperator
        /// The right-hand side.
        public var operand: FormExpression
    }

    /// The functions an expression may call, by the name written.
    public enum Function: String, Sendable, Hashable, CaseIterable {
        /// `if(condition, then, else)`: `then` when the condition is true, else `else`; only the branch taken is
        /// evaluated.
        case `if` = "if"
        /// `coalesce(a, b, …)`: the first argument that is neither null nor empty text.
        case coalesce
        /// `selected(field, 'value')`: whether a choice answer holds the value.
        case selected
        /// `count-selected(field)`: how many options a multiple-choice answer holds; 0 when unanswered.
        case countSelected = "count-selected"
        /// `string-length(text)`: the number of characters of the text.
        case stringLength = "string-length"
        /// `concat(a, b, …)`: the arguments as text, joined with nothing between them.
        case concat
        /// `today()`: the local date, `YYYY-MM-DD`.
        case today
        /// `now()`: the local date and time, `YYYY-MM-DDTHH:MM`.
        case now
        /// `sum(group.field)`: the total of a list's numbers (an item that is no number counts as 0).
        case sum
        /// `count(group)`: how many items of a list are not null; for a repeat, its live instances.
        case count
        /// `min(a, b, …)`: the smallest number among the arguments and their lists' items; null when there is none.
        case min
        /// `max(a, b, …)`: the largest number among the arguments and their lists' items; null when there is none.
        case max
        /// `round(number, digits)`: the number rounded to `digits` decimal places (0 when left out), halves away from
        /// zero.
        case round
        /// `sqrt(number)`: the square root; null for a negative number or no number.
        case sqrt
        /// `pow(base, exponent)`: the base raised to the exponent; null when the result is not a finite number.
        case pow
        /// `int(number)`: the number without its fraction (towards zero).
        case int
        /// `number(value)`: the value as a number (text like "3.5" too); null when it is none.
        case number
        /// `string(value)`: the value as text.
        case string
        /// `substr(text, start, end)`: the characters from `start` (counted from 0) up to `end` (to the end when
        /// left out), as ODK counts them.
        case substr
        /// `contains(text, part)`: whether the text holds the part.
        case contains
        /// `starts-with(text, part)`: whether the text starts with the part.
        case startsWith = "starts-with"
        /// `ends-with(text, part)`: whether the text ends with the part.
        case endsWith = "ends-with"
        /// `normalize-space(text)`: the text trimmed, each run of white space one space.
        case normalizeSpace = "normalize-space"
        /// `boolean-from-string(text)`: true for "true" and "1", false otherwise.
        case booleanFromString = "boolean-from-string"
        /// `regex(text, pattern)`: whether the pattern matches somewhere in the text, checked with the bounded
        /// work of every pattern (`PatternMatcher`); a check cut short is a failure, not false.
        case regex
        /// `date(value)`: a date from `YYYY-MM-DD…` text, or from a number of days since 1970-01-01.
        case date
        /// `decimal-date-time(value)`: a date or date and time as days since 1970-01-01, the time as a fraction.
        case decimalDateTime = "decimal-date-time"
        /// `count-non-empty(group.field)`: how many items of a list are neither null nor empty text.
        case countNonEmpty = "count-non-empty"
        /// `format-date(date, format)`: the date written by ODK's format: `%Y` `%y` `%m` `%n` `%b` `%d` `%e` `%a`.
        case formatDate = "format-date"
        /// `format-date-time(dateTime, format)`: as `format-date`, and `%H` `%h` `%M` `%S` `%3`.
        case formatDateTime = "format-date-time"
        /// `choice-label(value, 'field')`: the label of the choice `value` of the choice field named by its id
        /// (XLSForm's `jr:choice-name`); the value itself when that field has no such choice.
        case choiceLabel = "choice-label"
        /// `sin(radians)`, `cos(…)`, `tan(…)`: the trigonometric functions of an angle in radians.
        case sin, cos, tan
        /// `asin(number)`, `acos(…)`, `atan(…)`: the angle in radians; null outside the function's domain.
        case asin, acos, atan
        /// `exp(number)`: e raised to the number; null when the result is not a finite number.
        case exp
        /// `log(number)`, `log10(number)`: the natural and the base-10 logarithm; null for 0 or less.
        case log, log10
        /// `pi()`: π.
        case pi
        /// `position()`: the number of the repeat instance the expression is evaluated in, from 1 among the live
        /// instances (XLSForm's `position(..)`); only inside a repeat.
        case position
        /// `indexed-repeat(group.field, number)`: the field's value in the repeat instance of that number (from 1
        /// among the live ones), read from anywhere, inside the repeat too (another instance's); null when there is
        /// no such instance (XLSForm's `indexed-repeat(${field}, ${group}, number)`).
        case indexedRepeat = "indexed-repeat"
        /// `uuid()`: a new random identifier (`8-4-4-4-12` lower-case hexadecimal digits) at each evaluation; in a
        /// calculation, the first one computed is kept (see `once`).
        case uuid
        /// `once(value)`: the value; a calculation that calls `once()` or `uuid()` is kept: the first value it
        /// computes on the device is stored as the field's answer, and read from then on instead of computing it
        /// again (XLSForm's `once()`, evaluated only while the field is empty). Only calculations and defaults
        /// may call them.
        case once
        /// `area(shape)`: the area a `shape` answer encloses, in square metres on the sphere (`Geometry.area`); null
        /// when the value is not a shape.
        case area
        /// `distance(trace)`: the length of a `trace` answer (a `shape`'s perimeter) in metres along great
        /// circles (`Geometry.length`); null when the value is not a line of points.
        case distance

        /// How many arguments the function takes.
        var arity: ClosedRange<Int> {
            switch self {
            case .if: return 3...3
            case .coalesce: return 2...16
            case .selected: return 2...2
            case .countSelected, .stringLength, .sum, .count: return 1...1
            case .concat: return 1...64
            case .today, .now, .pi, .position, .uuid: return 0...0
            case .min, .max: return 1...16
            case .round: return 1...2
            case .sqrt, .int, .number, .string, .normalizeSpace, .booleanFromString, .once, .area, .distance: return 1...1
            case .pow, .contains, .startsWith, .endsWith, .regex: return 2...2
            case .substr: return 2...3
            case .date, .decimalDateTime, .countNonEmpty: return 1...1
            case .sin, .cos, .tan, .asin, .acos, .atan, .exp, .log, .log10: return 1...1
            case .formatDate, .formatDateTime, .choiceLabel, .indexedRepeat: return 2...2
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
            case .sqrt: return "sqrt(number)"
            case .pow: return "pow(base, exponent)"
            case .int: return "int(number)"
            case .number: return "number(value)"
            case .string: return "string(value)"
            case .substr: return "substr(text, start, end)"
            case .contains: return "contains(text, part)"
            case .startsWith: return "starts-with(text, part)"
            case .endsWith: return "ends-with(text, part)"
            case .normalizeSpace: return "normalize-space(text)"
            case .booleanFromString: return "boolean-from-string(text)"
            case .regex: return "regex(text, pattern)"
            case .date: return "date(value)"
            case .decimalDateTime: return "decimal-date-time(value)"
            case .countNonEmpty: return "count-non-empty(group.field)"
            case .formatDate: return "format-date(date, '%Y-%m-%d')"
            case .formatDateTime: return "format-date-time(dateTime, '%Y-%m-%d %H:%M')"
            case .choiceLabel: return "choice-label(value, 'field')"
            case .sin, .cos, .tan: return "\(rawValue)(radians)"
            case .asin, .acos, .atan, .exp, .log, .log10: return "\(rawValue)(number)"
            case .pi: return "pi()"
            case .position: return "position()"
            case .indexedRepeat: return "indexed-repeat(group.field, number)"
            case .uuid: return "uuid()"
            case .once: return "once(value)"
            case .area: return "area(shape)"
            case .distance: return "distance(trace)"
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
        case .entity(_, let id, _):
            id.visit(body)
        }
    }
}

/// Why an expression could not be read, with the 1-based column in the expression.
public struct ExpressionSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong and, where it helps, what to write instead.
    public var message: String
    /// Where, in characters from 1; one past the end when the expression ends too early.
    public var column: Int

    /// The message followed by its column.
    public var description: String { "\(message) (column \(column))" }
}

import Foundation

/// What an expression reads while it is evaluated: answers by name, the value of its own field (`.`), and the clock.
public protocol ExpressionScope {
    /// The value of `path` (`["severity"]`, `["defects", "cost"]`) as seen from where the expression is evaluated.
    func value(of path: [String]) -> ExpressionValue
    /// The value of the field the expression belongs to (`.`).
    var current: ExpressionValue { get }
    /// Today's date and the time now, for `today()` and `now()`.
    var clock: ExpressionClock { get }
    /// The label of the choice `value` of the choice field `field`, for `choice-label()`; nil when there is none.
    func choiceLabel(of value: String, field: String) -> String?
    /// The number (from 1) of the repeat instance the expression is evaluated in, for `position()`; nil outside
    /// a repeat.
    var position: Int? { get }
    /// The value of `path` (`["defects", "cost"]`, a repeat and a field directly inside it) in the repeat instance
    /// numbered `number` (from 1 among the live ones), for `indexed-repeat()`; null when there is none.
    func value(of path: [String], inInstance number: Int) -> ExpressionValue
    /// The property `property` of the entity `id` of the list `list`, for `entity('list', id, 'property')`
    /// (`name` the id, `label` the label); null when there is no such entity or property.
    func entity(_ list: String, id: String, property: String) -> ExpressionValue
}

extension ExpressionScope {
    /// No choice labels: `choice-label()` reads the value itself.
    public func choiceLabel(of value: String, field: String) -> String? { nil }
    /// No entity lists: an entity's property reads as null.
    public func entity(_ list: String, id: String, property: String) -> ExpressionValue { .null }
    /// Not inside a repeat: `position()` reads null.
    public var position: Int? { nil }
    /// The item numbered `number` of the list `path` reads (null when there is none, or it reads no list).
    public func value(of path: [String], inInstance number: Int) -> ExpressionValue {
        guard case .list(let items) = value(of: path), items.indices.contains(number - 1) else { return .null }
        return items[number - 1]
    }
}

/// A scope over a flat set of answers keyed by field id (no repeats); what `isSatisfied(by:)` uses.
public struct AnswersScope: ExpressionScope {
    /// The answers by field id.
    public var answers: [String: AnswerValue]
    /// The value of `.`.
    public var current: ExpressionValue
    /// The clock `today()` and `now()` read; nil: the device's, read when they are called.
    public var fixedClock: ExpressionClock?

    /// A scope over `answers`, where `.` is `current` and `clock` (nil: the device's) answers `today()` and `now()`.
    public init(_ answers: [String: AnswerValue], current: ExpressionValue = .null, clock: ExpressionClock? = nil) {
        self.answers = answers
        self.current = current
        self.fixedClock = clock
    }

    /// `fixedClock`, or else the device's clock read now.
    public var clock: ExpressionClock { fixedClock ?? .local() }

    /// The answer of a single field id; null for a path through a repeat, which this scope does not hold.
    public func value(of path: [String]) -> ExpressionValue {
        path.count == 1 ? ExpressionValue(answers[path[0]]) : .null
    }
}

extension FormExpression {
    /// The evaluation steps one evaluation may take (a node visited, a list item read). A `sum()` over 5,000
    /// instances takes about 5,000; an expression that needs more stops with a `.failure` saying so.
    public static let maximumSteps = 1_000_000

    /// Evaluates the expression in `scope`; never throws: work past `maximumSteps` gives `.failure`.
    public func evaluate(in scope: some ExpressionScope) -> ExpressionValue {
        var budget = Self.maximumSteps
        return evaluate(scope, &budget)
    }

    /// Evaluates the condition given the answers of the fields it names (absent = unanswered).
    public func isSatisfied(by answers: [String: AnswerValue]) -> Bool {
        evaluate(in: AnswersScope(answers)).isTruthy
    }

    static let exhausted = ExpressionValue.failure("The expression needs more than \(maximumSteps) steps to evaluate; simplify it or reduce the repeat instances it reads.")

    func evaluate(_ scope: some ExpressionScope, _ budget: inout Int) -> ExpressionValue {
        budget -= 1
        if budget < 0 { return Self.exhausted }
        switch self {
        case .name(let path):
            let value = scope.value(of: path)
            if case .list(let items) = value { budget -= items.count }
            return budget < 0 ? Self.exhausted : value
        case .current: return scope.current
        case .literal(let literal): return ExpressionValue(literal)
        case .list(let items): return .list(items.map(ExpressionValue.init))
        case .not(let inner):
            let value = inner.evaluate(scope, &budget)
            if case .failure = value { return value }
            return .bool(!value.isTruthy)
        case .negate(let inner):
            let value = inner.evaluate(scope, &budget)
            if case .failure = value { return value }
            return value.asNumber.map { .number(-$0) } ?? .null
        case .and(let left, let right):
            let first = left.evaluate(scope, &budget)
            if case .failure = first { return first }
            guard first.isTruthy else { return .bool(false) }
            let second = right.evaluate(scope, &budget)
            if case .failure = second { return second }
            return .bool(second.isTruthy)
        case .or(let left, let right):
            let first = left.evaluate(scope, &budget)
            if case .failure = first { return first }
            if first.isTruthy { return .bool(true) }
            let second = right.evaluate(scope, &budget)
            if case .failure = second { return second }
            return .bool(second.isTruthy)
        case .membership(let element, let container):
            let needle = element.evaluate(scope, &budget)
            let haystack = container.evaluate(scope, &budget)
            if case .failure = needle { return needle }
            if case .failure = haystack { return haystack }
            guard case .list(let items) = haystack else { return .bool(false) }
            if case .list(let needles) = needle {
                return .bool(!needles.isEmpty && needles.allSatisfy { wanted in items.contains { $0.equals(wanted) } })
            }
            return .bool(items.contains { $0.equals(needle) })
        case .compare(let leftExpression, let comparison, let rightExpression):
            let left = leftExpression.evaluate(scope, &budget)
            let right = rightExpression.evaluate(scope, &budget)
            if case .failure = left { return left }
            if case .failure = right { return right }
            switch comparison {
            case .equal: return .bool(left.equals(right))
            case .notEqual: return .bool(!left.equals(right))
            case .less, .lessOrEqual, .greater, .greaterOrEqual:
                guard let order = left.order(against: right) else { return .bool(false) }  // an unanswered side is never in order
                switch comparison {
                case .less: return .bool(order == .orderedAscending)
                case .lessOrEqual: return .bool(order != .orderedDescending)
                case .greater: return .bool(order == .orderedDescending)
                default: return .bool(order != .orderedAscending)
                }
            }
        case .arithmetic(let first, let steps):
            var result = first.evaluate(scope, &budget)
            for step in steps {
                if case .failure = result { return result }
                let operand = step.operand.evaluate(scope, &budget)
                if case .failure = operand { return operand }
                result = Self.apply(step.operation, result, operand)
            }
            return result
        case .call(let function, let arguments):
            return Self.call(function, arguments, scope, &budget)
        case .entity(let list, let idExpression, let property):
            let id = idExpression.evaluate(scope, &budget)
            if case .failure = id { return id }
            guard !id.isNull, case let text = id.text, !text.isEmpty else { return .null }
            return scope.entity(list, id: text, property: property)
        }
    }

    /// Numbers with numbers; a date plus or minus days; the days between two dates. Anything with an unanswered
    /// side, or a division by zero, is null.
    static func apply(_ operation: ArithmeticOperator, _ left: ExpressionValue, _ right: ExpressionValue) -> ExpressionValue {
        if case .date(let day) = left, let days = right.asNumber, let start = CivilDate.days(day) {
            switch operation {
            case .add: return .date(CivilDate.string(start + Int(days.rounded())))
            case .subtract:
                return .date(CivilDate.string(start - Int(days.rounded())))
            default: return .null
            }
        }
        if operation == .subtract, case .date(let leftDay) = left, case .date(let rightDay) = right,
           let start = CivilDate.days(leftDay), let end = CivilDate.days(rightDay) {
            return .number(Double(start - end))
        }
        guard let a = left.asNumber, let b = right.asNumber else { return .null }
        switch operation {
        case .add: return .number(a + b)
        case .subtract: return .number(a - b)
        case .multiply: return .number(a * b)
        case .divide: return b == 0 ? .null : .number(a / b)
        case .remainder: return b == 0 ? .null : .number(a.truncatingRemainder(dividingBy: b))
        }
    }

    static func call(_ function: Function, _ arguments: [FormExpression], _ scope: some ExpressionScope, _ budget: inout Int) -> ExpressionValue {
        if function == .if {
            let condition = arguments[0].evaluate(scope, &budget)
            if case .failure = condition { return condition }
            return (condition.isTruthy ? arguments[1] : arguments[2]).evaluate(scope, &budget)
        }
        if function == .coalesce {
            for argument in arguments {
                let value = argument.evaluate(scope, &budget)
                switch value {
                case .null: continue
                case .string(let text) where text.isEmpty: continue
                default: return value
                }
            }
            return .null
        }
        if function == .indexedRepeat {
            // The first argument names the repeat's field; it is not read as a value (inside the repeat it would
            // read only this instance's).
            let number = arguments[1].evaluate(scope, &budget)
            if case .failure = number { return number }
            guard case .name(let path) = arguments[0], let index = number.asNumber, index.isFinite, index == index.rounded(), abs(index) < 1e9 else { return .null }
            return scope.value(of: path, inInstance: Int(index))
        }
        var values: [ExpressionValue] = []
        for argument in arguments {
            let value = argument.evaluate(scope, &budget)
            if case .failure = value { return value }
            values.append(value)
        }
        switch function {
        case .if, .coalesce, .indexedRepeat: return .null  // handled above
        case .selected:
            switch values[0] {
            case .list(let items): return .bool(items.contains { $0.equals(values[1]) })
            case .null: return .bool(false)
            default: return .bool(values[0].equals(values[1]))
            }
        case .countSelected:
            switch values[0] {
            case .list(let items): return .number(Double(items.count))
            case .null: return .number(0)
            default: return .number(1)
            }
        case .stringLength: return .number(Double(values[0].text.count))
        case .concat: return .string(values.map(\.text).joined())
        case .today: return .date(scope.clock.today)
        case .now: return .dateTime(scope.clock.now)
        case .uuid: return .string(UUID().lowercased)
        case .once: return values[0]
        case .sum:
            let items: [ExpressionValue]
            if case .list(let list) = values[0] { items = list } else { items = [values[0]] }
            return .number(items.reduce(0) { $0 + ($1.asNumber ?? 0) })
        case .count:
            switch values[0] {
            case .list(let items): return .number(Double(items.filter { !$0.isNull }.count))
            case .null: return .number(0)
            default: return .number(1)
            }
        case .min, .max:
            let numbers = values.flatMap { value -> [Double] in
                if case .list(let items) = value { return items.compactMap(\.asNumber) }
                return value.asNumber.map { [$0] } ?? []
            }
            guard let result = function == .min ? numbers.min() : numbers.max() else { return .null }
            return .number(result)
        case .round:
            guard let number = values[0].asNumber else { return .null }
            let digits = values.count > 1 ? Int((values[1].asNumber ?? 0).rounded()) : 0
            let scale = pow(10, Double(Swift.max(-15, Swift.min(15, digits))))
            return .number((number * scale).rounded() / scale)
        case .area, .distance:
            guard case .string(let text) = values[0],
                  let geometry = try? Geometry(parsing: text, for: function == .area ? .shape : .trace, closing: true)
            else { return .null }
            return .number(function == .area ? geometry.area : geometry.length)
        case .sqrt:
            guard let number = values[0].asNumber, number >= 0 else { return .null }
            return .number(number.squareRoot())
        case .pow:
            guard let base = values[0].asNumber, let exponent = values[1].asNumber else { return .null }
            let result = pow(base, exponent)
            return result.isFinite ? .number(result) : .null
        case .sin, .cos, .tan, .asin, .acos, .atan, .exp, .log, .log10:
            guard let number = values[0].asNumber else { return .null }
            let result: Double
            switch function {
            case .sin: result = sin(number)
            case .cos: result = cos(number)
            case .tan: result = tan(number)
            case .asin: result = asin(number)
            case .acos: result = acos(number)
            case .atan: result = atan(number)
            case .exp: result = exp(number)
            case .log: result = log(number)
            default: result = log10(number)
            }
            return result.isFinite ? .number(result) : .null
        case .pi:
            return .number(Double.pi)
        case .position:
            return scope.position.map { .number(Double($0)) } ?? .null
        case .int:
            guard let number = values[0].asNumber, number.isFinite else { return .null }
            return .number(number.rounded(.towardZero))
        case .number:
            return values[0].asNumber.map(ExpressionValue.number) ?? .null
        case .string:
            return .string(values[0].text)
        case .substr:
            let characters = Array(values[0].text)
            let start = Swift.max(0, Swift.min(characters.count, Int((values[1].asNumber ?? 0).rounded(.towardZero))))
            let end = values.count > 2 ? Swift.max(start, Swift.min(characters.count, Int((values[2].asNumber ?? 0).rounded(.towardZero)))) : characters.count
            return .string(String(characters[start..<end]))
        case .contains: return .bool(values[1].text.isEmpty || values[0].text.contains(values[1].text))
        case .startsWith: return .bool(values[0].text.hasPrefix(values[1].text))
        case .endsWith: return .bool(values[0].text.hasSuffix(values[1].text))
        case .normalizeSpace:
            return .string(values[0].text.split(whereSeparator: \.isWhitespace).joined(separator: " "))
        case .booleanFromString:
            let text = values[0].text.lowercased()
            return .bool(text == "true" || text == "1")
        case .regex:
            // ODK's regex() finds the pattern anywhere in the text; ^ and $ anchor it.
            switch PatternMatcher.check(values[0].text, pattern: "(?s:.*?)(?:\(values[1].text))(?s:.*)") {
            case .match: return .bool(true)
            case .mismatch: return .bool(false)
            case .invalidPattern: return .failure("regex() was given \"\(values[1].text.prefix(60))\", which is not a regular expression")
            case .tooExpensive: return .failure(PatternMatcher.tooExpensiveMessage)
            }
        case .date:
            if let number = values[0].asNumber, case .number = values[0], abs(number) < 3_000_000 {
                return .date(CivilDate.string(Int(number.rounded(.down))))
            }
            let text = values[0].text
            return LocalDateTime.isDate(String(text.prefix(10))) ? .date(String(text.prefix(10))) : .null
        case .decimalDateTime:
            let text = values[0].text
            guard let days = CivilDate.days(text) else { return .null }
            let time = text.count >= 16 ? text.dropFirst(11).prefix(5).split(separator: ":").compactMap { Int($0) } : []
            let minutes = time.count == 2 ? Double(time[0] * 60 + time[1]) : 0
            return .number(Double(days) + minutes / 1_440)
        case .countNonEmpty:
            let items: [ExpressionValue]
            if case .list(let list) = values[0] { items = list } else { items = [values[0]] }
            return .number(Double(items.filter { !$0.text.isEmpty }.count))
        case .choiceLabel:
            func label(_ value: ExpressionValue) -> String { scope.choiceLabel(of: value.text, field: values[1].text) ?? value.text }
            switch values[0] {
            case .null: return .null
            case .list(let items): return .string(items.map(label).joined(separator: ", "))
            default: return .string(label(values[0]))
            }
        case .formatDate, .formatDateTime:
            return CivilDate.format(values[0].text, values[1].text).map(ExpressionValue.string) ?? .null
        }
    }
}

/// Days since 1970-01-01 for `YYYY-MM-DD`, and back (the proleptic Gregorian calendar, no time zone).
enum CivilDate {
    static func days(_ text: String) -> Int? {
        guard LocalDateTime.isDate(String(text.prefix(10))) else { return nil }
        let parts = text.prefix(10).split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        let (year, month, day) = (parts[0] - (parts[1] <= 2 ? 1 : 0), parts[1], parts[2])
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `value` (`YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM[:SS]`) written by ODK's `format-date` codes; nil when it is
    /// no date.
    static func format(_ value: String, _ format: String) -> String? {
        guard let days = days(value) else { return nil }
        let date = string(days).split(separator: "-").compactMap { Int($0) }
        let time = value.count >= 16 ? value.dropFirst(11).prefix(8).split(separator: ":").compactMap { Int($0) } : []
        let (hour, minute, second) = (time.first ?? 0, time.count > 1 ? time[1] : 0, time.count > 2 ? time[2] : 0)
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        var result = ""
        var percent = false
        for character in format {
            guard percent else {
                if character == "%" { percent = true } else { result.append(character) }
                continue
            }
            percent = false
            switch character {
            case "Y": result += String(format: "%04d", date[0])
            case "y": result += String(format: "%02d", date[0] % 100)
            case "m": result += String(format: "%02d", date[1])
            case "n": result += String(date[1])
            case "b": result += months[date[1] - 1]
            case "d": result += String(format: "%02d", date[2])
            case "e": result += String(date[2])
            case "a": result += weekdays[((days % 7) + 11) % 7]  // 1970-01-01 was a Thursday
            case "H": result += String(format: "%02d", hour)
            case "h": result += String(hour)
            case "M": result += String(format: "%02d", minute)
            case "S": result += String(format: "%02d", second)
            case "3": result += "000"
            case "%": result += "%"
            default: result += "%" + String(character)
            }
        }
        return result
    }

    static func string(_ days: Int) -> String {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPart = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPart + 2) / 5 + 1
        let month = monthPart + (monthPart < 10 ? 3 : -9)
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return String(format: "%04d-%02d-%02d", year, month, day)
    }
}

import Foundation
import Testing
@testable import FormModel

struct ExpressionTests {
    static let clock = ExpressionClock(today: "2026-11-23", now: "2026-11-23T14:30")

    func value(_ source: String, _ answers: [String: AnswerValue] = [:], current: AnswerValue? = nil) throws -> ExpressionValue {
        try FormExpression.parse(source).evaluate(in: AnswersScope(answers, current: ExpressionValue(current), clock: Self.clock))
    }

    @Test(arguments: [
        ("1 + 2 * 3", ExpressionValue.number(7)),
        ("(1 + 2) * 3", .number(9)),
        ("10 - 4 - 3", .number(3)),
        ("7 % 4", .number(3)),
        ("1 / 0", .null),
        ("-a + 1", .number(-2)),
        ("a * 2 > 5", .bool(true)),
        ("b + 1", .null),
        ("if(a > 2, 'big', 'small')", .string("big")),
        ("coalesce(b, '', 'fallback')", .string("fallback")),
        ("selected(tags, 'water')", .bool(true)),
        ("selected(tags, 'fire')", .bool(false)),
        ("count-selected(tags)", .number(2)),
        ("string-length(name)", .number(5)),
        ("concat(name, '-', a)", .string("Depot-3")),
        ("today()", .date("2026-11-23")),
        ("now()", .dateTime("2026-11-23T14:30")),
        ("today() + 10", .date("2026-12-03")),
        ("today() - due", .number(1)),
        ("due < today()", .bool(true)),
        ("due < '2026-11-22'", .bool(false)),
        ("now() > today()", .bool(false)),
        ("sum(tags)", .number(0)),
        ("count(tags)", .number(2)),
        ("max(a, 9, 4)", .number(9)),
        ("round(2.456, 2)", .number(2.46)),
        ("not (a == 3) or b == null", .bool(true)),
        // An unanswered field equals the empty text, as in XPath (XLSForm's `${b} = ''`), and nothing else.
        ("b == ''", .bool(true)),
        ("b != ''", .bool(false)),
        ("'' == b", .bool(true)),
        ("b == 'x'", .bool(false)),
        ("name == ''", .bool(false)),
        ("b == 0", .bool(false)),
        // The functions XLSForm's published forms use, as ODK evaluates them.
        ("sqrt(16)", .number(4)),
        ("sqrt(-1)", .null),
        ("pow(2, 10)", .number(1024)),
        ("pi()", .number(Double.pi)),
        ("cos(0) + sin(0) + tan(0)", .number(1)),
        ("round(atan(1) * 4, 6)", .number(3.141593)),
        ("round(asin(1) + acos(1), 6)", .number(1.570796)),
        ("asin(2)", .null),
        ("exp(0) + log(1) + log10(1000)", .number(4)),
        ("log(0)", .null),
        ("log10(-1)", .null),
        ("exp(1000)", .null),
        ("cos('x')", .null),
        ("int(-3.7)", .number(-3)),
        ("number('3.5') + 1", .number(4.5)),
        ("number('x')", .null),
        ("string(a)", .string("3")),
        ("substr(name, 1, 3)", .string("ep")),
        ("substr(name, 2)", .string("pot")),
        ("substr(name, 9)", .string("")),
        ("contains(name, 'po')", .bool(true)),
        ("starts-with(name, 'De')", .bool(true)),
        ("ends-with(name, 'De')", .bool(false)),
        ("normalize-space('  a \t b  ')", .string("a b")),
        ("boolean-from-string('true') and boolean-from-string('1')", .bool(true)),
        ("boolean-from-string('yes')", .bool(false)),
        ("regex(name, 'po')", .bool(true)),
        ("regex(name, '^po')", .bool(false)),
        ("regex('0123', '^[0-9]+$')", .bool(true)),
        ("date('2026-11-22T10:00')", .date("2026-11-22")),
        ("date(0)", .date("1970-01-01")),
        ("decimal-date-time('1970-01-02T06:00')", .number(1.25)),
        ("count-non-empty(tags)", .number(2)),
        ("format-date(due, '%a %e %b %Y (%d/%m/%y)')", .string("Sun 22 Nov 2026 (22/11/26)")),
        ("format-date-time('2026-11-22T09:05', '%H:%M %h')", .string("09:05 9")),
    ])
    func evaluates(source: String, expected: ExpressionValue) throws {
        let answers: [String: AnswerValue] = ["a": .integer(3), "tags": .choices(["water", "electrical"]), "name": .text("Depot"), "due": .date("2026-11-22")]
        #expect(try value(source, answers) == expected, "\(source)")
    }

    @Test func aConstraintReadsItsOwnValueAsDot() throws {
        #expect(try value(". >= 0 and . <= 10", current: .integer(4)).isTruthy)
        #expect(!(try value(". >= 0 and . <= 10", current: .integer(11)).isTruthy))
    }

    @Test(arguments: [
        ("a +", 4, "ends where"),
        ("foo(1)", 1, "not a function"),
        ("if(a, b)", 1, "takes 3 argument"),
        ("today(1)", 1, "takes 0 argument"),
        ("defects.", 9, "Expected a field name after '.'"),
        ("a = 1", 3, "'=='"),
    ])
    func malformedExpressionsSayWhatAndWhere(source: String, column: Int, message: String) {
        #expect {
            _ = try FormExpression.parse(source)
        } throws: { error in
            guard let error = error as? ExpressionSyntaxError else { return false }
            return error.column == column && error.message.contains(message)
        }
    }

    @Test func hyphenatedFunctionsAreNotSubtractions() throws {
        #expect(try FormExpression.parse("count-selected(x)") == .call(.countSelected, [.name(["x"])]))
        #expect(try FormExpression.parse("a-b") == .arithmetic(.name(["a"]), [.init(operation: .subtract, operand: .name(["b"]))]))
    }

    @Test func longArithmeticChainsStayFlat() throws {
        let source = (0..<1_000).map { _ in "a" }.joined(separator: " + ")
        let expression = try FormExpression.parse(source)
        #expect(InputLimitTests.depth(of: expression) == 2)
        #expect(expression.isSatisfied(by: ["a": .integer(1)]))
        #expect(try value(source, ["a": .integer(2)]) == .number(2_000))
    }

    @Test func evaluationPastTheStepBudgetFailsWithAMessage() throws {
        // A list of 10,000 items read 200 times: 2,000,000 steps, past the budget of one evaluation.
        let source = (0..<200).map { _ in "count(big)" }.joined(separator: " + ")
        let answers: [String: AnswerValue] = ["big": .choices((0..<10_000).map(String.init))]
        guard case .failure(let message) = try value(source, answers) else {
            Issue.record("expected the budget to run out")
            return
        }
        #expect(message.contains("steps"))
    }

    @Test func civilDatesRoundTrip() {
        for days in stride(from: -700_000, to: 2_900_000, by: 997) {
            #expect(CivilDate.days(CivilDate.string(days)) == days)
        }
        #expect(CivilDate.days("1970-01-01") == 0)
        #expect(CivilDate.days("2000-03-01") == 11_017)
    }
}

/// Random expressions, printed with their seed: the parser never crashes, what parses evaluates, and printing
/// the tree back and parsing it again gives the same tree.
struct ExpressionPropertyTests {
    @Test func randomExpressionsParseAndEvaluateWithoutCrashing() throws {
        var generator = SplitMix64(seed: UInt64.random(in: 0...UInt64.max))
        print("ExpressionPropertyTests seed: \(generator.seed)")
        let pieces = ["a", "b", "tags", "defects.cost", ".", "1", "2.5", "'x'", "true", "null", "(", ")", "+", "-", "*", "/", "%",
                      "==", "!=", "<", ">=", "and", "or", "not", "in", "[", "]", ",", "if(", "sum(", "count(", "concat(",
                      "count-selected(", "today()", "coalesce(", "'", "=", "#", " "]
        let answers: [String: AnswerValue] = ["a": .integer(3), "b": .decimal(1.5), "tags": .choices(["x"])]
        var parsed = 0
        for _ in 0..<5_000 {
            let length = Int(generator.next() % 12) + 1
            let source = (0..<length).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined(separator: " ")
            guard let expression = try? FormExpression.parse(source) else { continue }
            parsed += 1
            _ = expression.evaluate(in: AnswersScope(answers, current: .number(1), clock: ExpressionTests.clock))
            let printed = Self.source(expression)
            let again = try FormExpression.parse(printed)
            #expect(Self.source(again) == printed, "seed \(generator.seed): \(source) → \(printed)")
        }
        #expect(parsed > 100, "seed \(generator.seed): too few random expressions parsed to mean anything")
    }

    @Test func randomTreesPrintAndParseBackToTheSameValue() throws {
        var generator = SplitMix64(seed: UInt64.random(in: 0...UInt64.max))
        print("ExpressionPropertyTests trees seed: \(generator.seed)")
        let answers: [String: AnswerValue] = ["a": .integer(4), "b": .integer(-2), "c": .decimal(0.5)]
        for _ in 0..<2_000 {
            let tree = Self.randomNumber(&generator, depth: 4)
            let source = Self.source(tree)
            let parsed = try FormExpression.parse(source)
            let scope = AnswersScope(answers, clock: ExpressionTests.clock)
            #expect(parsed.evaluate(in: scope) == tree.evaluate(in: scope), "seed \(generator.seed): \(source)")
        }
    }

    static func randomNumber(_ generator: inout SplitMix64, depth: Int) -> FormExpression {
        let choice = depth == 0 ? generator.next() % 2 : generator.next() % 6
        switch choice {
        case 0: return .name([["a", "b", "c"][Int(generator.next() % 3)]])
        case 1: return .literal(.number(Double(generator.next() % 10)))
        case 2: return .negate(randomNumber(&generator, depth: depth - 1))
        case 3: return .call(.if, [.compare(randomNumber(&generator, depth: depth - 1), .less, randomNumber(&generator, depth: depth - 1)),
                                   randomNumber(&generator, depth: depth - 1), randomNumber(&generator, depth: depth - 1)])
        default:
            let operators: [FormExpression.ArithmeticOperator] = [.add, .subtract, .multiply, .divide, .remainder]
            let steps = (0..<Int(generator.next() % 3) + 1).map { _ in
                FormExpression.ArithmeticStep(operation: operators[Int(generator.next() % 5)], operand: randomNumber(&generator, depth: depth - 1))
            }
            return .arithmetic(randomNumber(&generator, depth: depth - 1), steps)
        }
    }

    /// Prints a tree back as source, fully parenthesised.
    static func source(_ expression: FormExpression) -> String {
        switch expression {
        case .name(let path): return path.joined(separator: ".")
        case .current: return "."
        case .literal(.string(let text)): return "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        case .literal(.number(let number)): return number < 0 ? "(-\(AnswerValue.format(-number)))" : AnswerValue.format(number)
        case .literal(.bool(let flag)): return flag ? "true" : "false"
        case .literal(.null): return "null"
        case .list(let items): return "[" + items.map { source(.literal($0)) }.joined(separator: ", ") + "]"
        case .not(let inner): return "(not \(source(inner)))"
        case .negate(let inner): return "(-\(source(inner)))"
        case .and(let left, let right): return "(\(source(left)) and \(source(right)))"
        case .or(let left, let right): return "(\(source(left)) or \(source(right)))"
        case .compare(let left, let op, let right): return "(\(source(left)) \(op.rawValue) \(source(right)))"
        case .membership(let left, let right): return "(\(source(left)) in \(source(right)))"
        case .arithmetic(let first, let steps):
            // Left to right, each step in its own parentheses: the tree's order whatever the operators' precedence.
            return steps.reduce(source(first)) { text, step in "(\(text) \(step.operation.rawValue) \(source(step.operand)))" }
        case .call(let function, let arguments): return function.rawValue + "(" + arguments.map(source).joined(separator: ", ") + ")"
        case .entity(let list, let id, let property): return "entity('\(list)', \(source(id)), '\(property)')"
        }
    }
}

/// `ExpressionClock.local` keeps the clock of the last local minute it made: what it returns is what the calendar
/// says at every instant, across minutes, time zones and a daylight saving transition.
struct ExpressionClockTests {
    /// The clock the calendar gives at `date` in `zone`, computed here without `local`.
    static func expected(_ date: Date, _ zone: TimeZone) -> ExpressionClock {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let day = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
        return ExpressionClock(today: day, now: day + String(format: "T%02d:%02d", parts.hour!, parts.minute!))
    }

    @Test func theKeptMinuteGivesWhatTheCalendarGives() throws {
        let zones = try ["UTC", "America/New_York", "Asia/Kathmandu", "Europe/Berlin"].map { try #require(TimeZone(identifier: $0)) }
        // 2026-03-08 01:59:00 EST, a minute before New York's clocks go from 02:00 to 03:00; and 23:59:58 UTC.
        let starts = [Date(timeIntervalSince1970: 1_772_953_140), Date(timeIntervalSince1970: 1_764_460_798)]
        for start in starts {
            for step in [0.0, 0.5, 29.999, 59.999, 60, 60.001, 61, 119.5, 3_599, 3_600.25] {
                for zone in zones + zones.reversed() {
                    let date = start.addingTimeInterval(step)
                    #expect(ExpressionClock.local(at: date, timeZone: zone) == Self.expected(date, zone), "\(date) in \(zone.identifier)")
                }
            }
            // Backwards in time too: an earlier instant is not answered from a later minute.
            for step in [120.0, 59.0, 0.0, -0.001, -60.0] {
                let date = start.addingTimeInterval(step)
                #expect(ExpressionClock.local(at: date, timeZone: zones[1]) == Self.expected(date, zones[1]), "\(date)")
            }
        }
    }
}

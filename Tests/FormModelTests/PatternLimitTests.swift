import Foundation
import Testing
@testable import FormModel

/// Patterns that backtrack catastrophically: checks stop at a bounded amount of work, and the linter names them.
struct PatternLimitTests {
    static let hostile: [(pattern: String, value: String)] = [
        ("(a+)+$", String(repeating: "a", count: 40) + "!"),
        ("(a|aa)*$", String(repeating: "a", count: 60) + "!"),
        ("^(\\w+\\s?)*$", String(repeating: "word ", count: 12) + "!"),
        ("([a-z]+-?)*[0-9]", String(repeating: "abc", count: 20)),
    ]

    @Test(arguments: zip(hostile.map(\.pattern), hostile.map(\.value)))
    func aHostilePatternStopsAtTheWorkLimit(pattern: String, value: String) {
        #expect(PatternMatcher.check(value, pattern: pattern) == .tooExpensive)
        let field = FieldDefinition(id: "code", kind: .text, label: "Code", pattern: pattern)
        let issues = FieldValidator.issues(for: field, answer: .text(value))
        #expect(issues.map(\.code) == [.patternTooExpensive])
    }

    @Test func ordinaryPatternsMatchAsBeforeEvenOnLongValues() {
        #expect(PatternMatcher.check("AB-1234", pattern: "[A-Z]{2}-\\d{4}") == .match)
        #expect(PatternMatcher.check("AB-123x", pattern: "[A-Z]{2}-\\d{4}") == .mismatch)
        #expect(PatternMatcher.check("aaa", pattern: "a") == .mismatch)  // the whole value must match
        #expect(PatternMatcher.check("x", pattern: "(") == .invalidPattern)
        // A long value under a linear pattern is never cut short: the allowance grows with the value.
        let long = String(repeating: "word ", count: 200_000)
        #expect(PatternMatcher.check(long, pattern: "[a-z ]*") == .match)
        #expect(PatternMatcher.check(long + "!", pattern: "[a-z ]*") == .mismatch)
    }

    @Test func precheckKeepsVerdictsSoValidationRunsNoPatternAgain() throws {
        let form = FormDefinition(id: "f", version: 1, title: "T", completionLabel: "Add", pages: [
            FormPage(id: "p", fields: [
                FieldDefinition(id: "code", kind: .text, label: "Code", pattern: "(a+)+$"),
                FieldDefinition(id: "n", kind: .integer, label: "N"),
            ]),
        ])
        let validator = FormValidator(form: form)
        let hostile = String(repeating: "a", count: 40) + "!"
        let (issues, verdicts) = validator.precheck(["code": .text(hostile), "n": .text("x"), "zz": .integer(1)])
        #expect(issues.map(\.code) == [.patternTooExpensive, .wrongType, .unknownField])
        #expect(verdicts.outcome(pattern: "(a+)+$", text: hostile) == .tooExpensive)
        #expect(validator.validate(["code": .text(hostile)], verdicts: verdicts).issues.map(\.code) == [.patternTooExpensive])
        #expect(validator.precheck(["code": .text("aaa")]).issues.isEmpty)
        var all = PatternVerdicts()
        all.merge(verdicts)
        all.merge(validator.precheck(["code": .text("aaa")]).verdicts)
        #expect(all.count == 2)
        #expect(all.outcome(pattern: "(a+)+$", text: "aaa") == .match)
    }

    @Test func checkPatternsChecksTheTextAnswersOfFieldsWithAPatternOnly() {
        let form = FormDefinition(id: "f", version: 1, title: "T", completionLabel: "Add", pages: [
            FormPage(id: "p", fields: [
                FieldDefinition(id: "code", kind: .text, label: "Code", pattern: "[A-Z]{2}"),
                FieldDefinition(id: "ref", kind: .text, label: "Ref", pattern: "\\d+"),
                FieldDefinition(id: "note", kind: .text, label: "Note"),
            ]),
        ])
        var verdicts = PatternVerdicts()
        FormValidator(form: form).checkPatterns(["code": .text("AB"), "ref": .text("x1"), "note": .text("AB"), "zz": .text("AB")], into: &verdicts)
        #expect(verdicts.count == 2)
        #expect(verdicts.outcome(pattern: "[A-Z]{2}", text: "AB") == .match)
        #expect(verdicts.outcome(pattern: "\\d+", text: "x1") == .mismatch)
        // A form without patterns checks nothing.
        let plain = FormDefinition(id: "g", version: 1, title: "T", completionLabel: "Add", pages: [
            FormPage(id: "p", fields: [FieldDefinition(id: "note", kind: .text, label: "Note")]),
        ])
        var none = PatternVerdicts()
        FormValidator(form: plain).checkPatterns(["note": .text("AB")], into: &none)
        #expect(none.count == 0)
    }

    @Test(arguments: ["(a+)+$", "(a|aa)*$", "^(\\w+\\s?)*$", "^(a*)*b$", "^([0-9]+)+x$"])
    func theLinterRejectsPatternsThatBacktrackCatastrophically(pattern: String) throws {
        let result = Fixtures.load(Self.form(pattern: pattern))
        let finding = try #require(result.findings.first { $0.rule == "pattern-catastrophic-backtracking" }, "\(result.findings)")
        #expect(finding.severity == .error)
        #expect(finding.path.description == "$.pages[0].fields[0].pattern")
        #expect(finding.location != nil)
        #expect(!finding.fix.isEmpty)
        #expect(result.loaded == nil)
    }

    /// A backreference makes one step of the engine compare text of any length, so its checks cannot be
    /// bounded by steps: `^(a+)\\1*$` on 60,001 characters ran for seconds. Long values are refused at once,
    /// short ones checked, and the linter refuses the pattern.
    @Test func aBackreferenceIsBoundedByTheValuesLengthAndRefusedByTheLinter() throws {
        let hostile = String(repeating: "a", count: 60_000) + "b"
        let started = ContinuousClock.now
        #expect(PatternMatcher.check(hostile, pattern: "^(a+)\\1*$") == .tooExpensive)
        #expect(ContinuousClock.now - started < .milliseconds(500))
        #expect(PatternMatcher.check("abab", pattern: "^(ab)\\1$") == .match)
        #expect(PatternMatcher.check("abac", pattern: "^(ab)\\1$") == .mismatch)
        for pattern in ["^(a+)\\1*$", "(?<x>a+)\\k<x>", "(a)(b)\\2"] {
            let result = Fixtures.load(Self.form(pattern: pattern))
            let finding = try #require(result.findings.first { $0.rule == "pattern-backreference" }, "\(pattern): \(result.findings)")
            #expect(finding.severity == .error)
            #expect(result.loaded == nil)
        }
        #expect(PatternMatcher.backreference(in: "^(a+)\\1*$") == "\\1")
        #expect(PatternMatcher.backreference(in: "(?<x>a+)\\k<x>") == "\\k<x>")
        #expect(PatternMatcher.backreference(in: "\\\\1") == nil)  // an escaped backslash, then 1
        #expect(PatternMatcher.backreference(in: "\\Q\\1\\E") == nil)  // quoted text
        #expect(PatternMatcher.backreference(in: "\\d{4}\\0") == nil)
    }

    /// Every check stops at its time limit or at the caller's deadline, and one budget covers all the checks
    /// of a push.
    @Test func checksStopAtTheirDeadlineAndShareABudget() {
        let value = String(repeating: "a", count: 40) + "!"
        #expect(PatternMatcher.check("AB-1234", pattern: "[A-Z]{2}-\\d{4}", deadline: .now - .seconds(1)) == .tooExpensive)
        var spent = PatternVerdicts(budget: .zero)
        #expect(spent.check("AB-1234", pattern: "[A-Z]{2}-\\d{4}") == .tooExpensive)
        var budget = PatternVerdicts(budget: .milliseconds(300))
        let started = ContinuousClock.now
        // Each of these stops at the work limit: many of them together stop at the budget.
        for index in 0..<10_000 {
            budget.check(value + String(index), pattern: "(a+)+$")
        }
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(budget.check("AB-1234", pattern: "[A-Z]{2}-\\d{4}") == .tooExpensive)
        var ample = PatternVerdicts(budget: .seconds(60))
        #expect(ample.check("AB-1234", pattern: "[A-Z]{2}-\\d{4}") == .match)
    }

    @Test(arguments: ["[A-Z]{2}-\\d{4}", "^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$", "(ab|cd)*", "(\\d{3}-)*\\d{4}", "(?>a+)+$", "(a++)+$", "\\(\\d+\\)"])
    func safePatternsGetNoError(pattern: String) {
        let result = Fixtures.load(Self.form(pattern: pattern))
        #expect(!result.findings.hasErrors, "\(result.findings)")
        #expect(result.loaded != nil)
    }

    @Test func anUnconfirmedRiskIsAWarning() {
        // Alternatives starting alike, but they part after one character: slow in theory, not in practice.
        let result = Fixtures.load(Self.form(pattern: "(ab|ac)*"))
        #expect(result.findings.map(\.rule) == ["pattern-backtracking-risk"])
        #expect(result.findings.first?.severity == .warning)
    }

    static func form(pattern: String) -> String {
        let escaped = String(decoding: try! JSONEncoder().encode(pattern), as: UTF8.self)
        return Fixtures.formJSON(fields: #"[{ "id": "code", "kind": "text", "label": "Code", "pattern": \#(escaped) }]"#)
    }
}

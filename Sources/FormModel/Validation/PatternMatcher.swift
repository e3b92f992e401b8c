import Foundation

/// Whole-string regular expression matching for `pattern` constraints, with bounded work.
///
/// Patterns are ICU regular expressions, matched by backtracking; a pattern such as `(a+)+$` can take time
/// exponential in the length of a value. Every check therefore runs under a work limit: the engine reports its
/// progress about every 10,000 steps, and a check that needs more than `workLimit(for:)` reports stops with
/// `.tooExpensive` instead of running on. The linter flags such patterns before a form is published
/// (`PatternRisk`).
public enum PatternMatcher {
    /// The result of checking one value.
    public enum Outcome: Sendable, Hashable {
        /// The whole value matches.
        case match
        /// The value does not match, or only part of it does.
        case mismatch
        /// The check needed more work than allowed: the pattern backtracks catastrophically on this value.
        case tooExpensive
        /// The pattern does not compile.
        case invalidPattern
    }

    /// The longest pattern compiled, in characters.
    public static let maximumPatternLength = 1_000
    /// Progress reports (each about 10,000 steps of the regex engine) any check may take.
    public static let baseWorkLimit = 20
    /// Further progress reports allowed per this many UTF-16 units of the value, so long values matched in
    /// linear time are never cut short.
    public static let valueLengthPerExtraReport = 500

    /// What the person filling the form reads when a check was cut short.
    public static let tooExpensiveMessage =
        "This answer could not be checked against the field's pattern: the pattern needs too much work for it. Ask the form's author to simplify the pattern (`fieldsheet lint` shows why)."

    /// The progress reports allowed for a value of `text`'s length.
    public static func workLimit(for text: String) -> Int {
        baseWorkLimit + text.utf16.count / valueLengthPerExtraReport
    }

    /// Whether `pattern` compiles as a regular expression (and is no longer than `maximumPatternLength`).
    public static func isValid(_ pattern: String) -> Bool {
        compile(pattern) != nil
    }

    static func compile(_ pattern: String) -> NSRegularExpression? {
        guard pattern.count <= maximumPatternLength else { return nil }
        return try? NSRegularExpression(pattern: pattern)
    }

    /// Whether all of `text` matches `pattern`; an invalid pattern, or one too expensive for `text`, matches nothing.
    public static func matchesWhole(_ text: String, pattern: String) -> Bool {
        check(text, pattern: pattern) == .match
    }

    /// Checks all of `text` against `pattern`, stopping after `workLimit` progress reports of the engine.
    public static func check(_ text: String, pattern: String, workLimit: Int? = nil) -> Outcome {
        guard let expression = compile(pattern) else { return .invalidPattern }
        return check(text, expression: expression, workLimit: workLimit ?? self.workLimit(for: text))
    }

    static func check(_ text: String, expression: NSRegularExpression, workLimit: Int) -> Outcome {
        let range = NSRange(text.startIndex..., in: text)
        var outcome = Outcome.mismatch
        var reports = 0
        expression.enumerateMatches(in: text, options: [.anchored, .reportProgress], range: range) { match, _, stop in
            if let match {
                outcome = match.range == range ? .match : .mismatch
                stop.pointee = true
                return
            }
            reports += 1
            if reports > workLimit {
                outcome = .tooExpensive
                stop.pointee = true
            }
        }
        return outcome
    }
}

/// Outcomes of pattern checks computed ahead of time — before a write lock is taken, say — so validation
/// inside the lock runs no regular expression for those values.
public struct PatternVerdicts: Sendable {
    struct Key: Hashable, Sendable {
        var pattern: String
        var text: String
    }

    var outcomes: [Key: PatternMatcher.Outcome] = [:]

    /// No outcomes yet.
    public init() {}

    /// Checks `text` against `pattern` (bounded) and keeps the outcome.
    @discardableResult
    public mutating func check(_ text: String, pattern: String) -> PatternMatcher.Outcome {
        let key = Key(pattern: pattern, text: text)
        if let known = outcomes[key] { return known }
        let outcome = PatternMatcher.check(text, pattern: pattern)
        outcomes[key] = outcome
        return outcome
    }

    /// The outcome kept for `text` and `pattern`, if it was checked.
    public func outcome(pattern: String, text: String) -> PatternMatcher.Outcome? {
        outcomes[Key(pattern: pattern, text: text)]
    }

    /// Keeps `other`'s outcomes too (say, of every mutation of one push).
    public mutating func merge(_ other: PatternVerdicts) {
        outcomes.merge(other.outcomes) { kept, _ in kept }
    }

    /// How many outcomes are kept.
    public var count: Int { outcomes.count }
}

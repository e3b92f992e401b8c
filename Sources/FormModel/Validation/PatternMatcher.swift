import Foundation

/// Whole-string regular expression matching for `pattern` constraints, with bounded work.
///
/// Patterns are ICU regular expressions, matched by backtracking; a pattern such as `(a+)+$` can take time
/// exponential in the length of a value. Every check therefore runs under two limits: the engine reports its
/// progress about every 10,000 steps, and a check that needs more than `workLimit(for:)` reports, or runs past
/// `timeLimit` (or the caller's deadline), stops with `.tooExpensive` instead of running on.
///
/// Both limits are read at the engine's progress reports, so they hold only while one step costs little. A
/// backreference (`\1`, `\k<name>`) breaks that: one step compares a captured stretch of text of any length,
/// and `^(a+)\1*$` on 60,000 characters runs for seconds between two reports. A pattern with a backreference is
/// therefore checked only on values of at most `backreferenceValueLimit` UTF-16 units (longer ones are
/// `.tooExpensive` without running), and the linter refuses such patterns at publish (`PatternRisk`), along
/// with those a built value confirms to backtrack catastrophically.
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

    /// Longest a single check may run, whatever its work allowance.
    public static let timeLimit: Duration = .milliseconds(100)
    /// Longest value, in UTF-16 units, checked against a pattern with a backreference.
    public static let backreferenceValueLimit = 1_000

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

    /// Checks all of `text` against `pattern`, stopping after `workLimit` progress reports of the engine, after
    /// `timeLimit`, or at `deadline` when that comes first.
    public static func check(_ text: String, pattern: String, workLimit: Int? = nil, deadline: ContinuousClock.Instant? = nil) -> Outcome {
        guard let expression = compile(pattern) else { return .invalidPattern }
        if text.utf16.count > backreferenceValueLimit, backreference(in: pattern) != nil { return .tooExpensive }
        let start = ContinuousClock.now
        let stopAt = min(start + timeLimit, deadline ?? start + timeLimit)
        guard start < stopAt else { return .tooExpensive }
        return check(text, expression: expression, workLimit: workLimit ?? self.workLimit(for: text), stopAt: stopAt)
    }

    static func check(_ text: String, expression: NSRegularExpression, workLimit: Int, stopAt: ContinuousClock.Instant) -> Outcome {
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
            if reports > workLimit || ContinuousClock.now >= stopAt {
                outcome = .tooExpensive
                stop.pointee = true
            }
        }
        return outcome
    }

    /// The first backreference in `pattern` (`\1`…`\9` and following digits, or `\k<name>`), as written; nil
    /// when it has none. Text quoted by `\Q…\E` and escaped backslashes are skipped; a `\1` inside a set is
    /// counted too (ICU reads no backreference there, but no sensible pattern writes one).
    public static func backreference(in pattern: String) -> String? {
        let characters = Array(pattern)
        var index = 0
        var quoting = false
        while index < characters.count {
            let character = characters[index]
            if quoting {
                if character == "\\", index + 1 < characters.count, characters[index + 1] == "E" { quoting = false; index += 2 } else { index += 1 }
                continue
            }
            guard character == "\\", index + 1 < characters.count else { index += 1; continue }
            let next = characters[index + 1]
            if next == "Q" {
                quoting = true
            } else if next.isASCII, let digit = next.wholeNumberValue, digit > 0 {
                var end = index + 2
                while end < characters.count, characters[end].isASCII, characters[end].isNumber { end += 1 }
                return String(characters[index..<end])
            } else if next == "k", index + 2 < characters.count, characters[index + 2] == "<" {
                var end = index + 3
                while end < characters.count, characters[end] != ">" { end += 1 }
                return String(characters[index..<min(end + 1, characters.count)])
            }
            index += 2
        }
        return nil
    }
}

/// Outcomes of pattern checks computed ahead of time, so a later validation runs no regular expression for
/// those values; with a deadline, a budget for all the checks of one request (the server gives each push one).
public struct PatternVerdicts: Sendable {
    struct Key: Hashable, Sendable {
        var pattern: String
        var text: String
    }

    var outcomes: [Key: PatternMatcher.Outcome] = [:]
    /// When checks stop: any check not finished by then is `.tooExpensive`. Nil: each check has only its own limits.
    public let deadline: ContinuousClock.Instant?

    /// No outcomes yet, and no budget beyond each check's own limits.
    public init() { deadline = nil }

    /// No outcomes yet; all checks together stop after `budget` from now.
    public init(budget: Duration) { deadline = ContinuousClock.now + budget }

    /// Checks `text` against `pattern` (bounded, and within the budget) and keeps the outcome.
    @discardableResult
    public mutating func check(_ text: String, pattern: String) -> PatternMatcher.Outcome {
        let key = Key(pattern: pattern, text: text)
        if let known = outcomes[key] { return known }
        let outcome = PatternMatcher.check(text, pattern: pattern, deadline: deadline)
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

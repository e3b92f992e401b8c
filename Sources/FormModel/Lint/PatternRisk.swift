import Foundation

/// Finds the parts of a `pattern` that can make a backtracking matcher take exponential time.
///
/// Two shapes are looked for in every repeated group (`*`, `+`, `{n,}`, `{n,m}` with m > 1):
/// - a repeat inside the repeat that can end (or start) an iteration and matches what the group starts (ends)
///   with — `(a+)+`, `(\w+\s?)*`: text can be split between the iterations in exponentially many ways;
/// - alternatives that can start with the same character — `(a|aa)*`, `(\d|\w)+`.
/// Each suspect is then tried: a value built to exercise it (the shared character repeated, then one that
/// fails the match) is checked with `PatternMatcher`'s work limit. A suspect that exhausts the limit is
/// `confirmed`; the linter reports it as an error, an unconfirmed one as a warning.
/// A suspect not confirmed on that short value is tried once more on a long one (4,000 characters) with the
/// allowance such a value gets, so that polynomial blow-ups are confirmed too.
/// Atomic groups and possessive quantifiers do not backtrack and are not suspects.
///
/// A backreference is always a confirmed risk: one step of the engine then compares a captured stretch of
/// text of any length, so neither the work limit nor the time limit of `PatternMatcher` can hold.
public struct PatternRisk: Sendable, Hashable {
    /// Which ambiguity makes the repeated group backtrack.
    public enum Shape: Sendable, Hashable {
        /// A repeat inside the repeated group can split text between iterations, like `(a+)+`.
        case nestedQuantifier
        /// Alternatives in the repeated group can start with the same character, like `(a|aa)*`.
        case overlappingAlternatives
        /// A backreference, like `\1` in `^(a+)\1*$`: the cost of one step is not bounded.
        case backreference
    }

    /// Which of the two shapes was found.
    public var shape: Shape
    /// The repeated group, as written in the pattern.
    public var group: String
    /// A value that exercises it (shown shortened in messages).
    public var sample: String
    /// Whether checking `sample` exhausted the work allowed for one value.
    public var confirmed: Bool

    /// The risks of `pattern`, most severe first; none for a pattern that does not compile.
    public static func analyze(_ pattern: String) -> [PatternRisk] {
        guard PatternMatcher.isValid(pattern) else { return [] }
        if let reference = PatternMatcher.backreference(in: pattern) {
            return [PatternRisk(shape: .backreference, group: reference, sample: "", confirmed: true)]
        }
        var parser = RegexShapeParser(pattern: Array(pattern))
        guard let tree = parser.parseAlternation(), parser.atEnd else { return [] }
        var analysis = RegexShapeAnalysis()
        var suspects: [(Shape, String, Character, prefix: String)] = []
        analysis.findSuspects(tree, prefix: "", into: &suspects)
        var risks: [PatternRisk] = []
        var seen = Set<String>()
        for (shape, group, character, prefix) in suspects where seen.insert(group).inserted {
            let pump = prefix + String(repeating: character, count: 48)
            var sample = pump + "!"
            var confirmed = false
            for ending in ["!", "\u{1}", " ", "#", "0", "a", "A", "-", ""] {
                if PatternMatcher.check(pump + ending, pattern: pattern, workLimit: PatternMatcher.baseWorkLimit) == .tooExpensive {
                    sample = pump + ending
                    confirmed = true
                    break
                }
            }
            if !confirmed {
                let long = prefix + String(repeating: character, count: 4_000) + "!"
                if PatternMatcher.check(long, pattern: pattern) == .tooExpensive {
                    sample = long
                    confirmed = true
                }
            }
            risks.append(PatternRisk(shape: shape, group: group, sample: sample, confirmed: confirmed))
        }
        return risks.sorted { $0.confirmed && !$1.confirmed }
    }
}

/// Character sets of atoms, sampled over a small alphabet, and the search for ambiguous repeats.
struct RegexShapeAnalysis {
    /// The characters atoms are tried on: printable ASCII, tab, newline, a letter with an accent.
    static let alphabet: [Character] = (0x20...0x7E).map { Character(UnicodeScalar(UInt8($0))) } + ["\t", "\n", "é"]
    var atomSets: [String: Set<Int>] = [:]

    mutating func characters(of atom: String) -> Set<Int> {
        if let known = atomSets[atom] { return known }
        var set = Set<Int>()
        if let expression = try? NSRegularExpression(pattern: "(?:" + atom + ")") {
            for (position, character) in Self.alphabet.enumerated() {
                let text = String(character)
                let range = NSRange(text.startIndex..., in: text)
                if let match = expression.firstMatch(in: text, options: [.anchored], range: range), match.range == range {
                    set.insert(position)
                }
            }
        }
        atomSets[atom] = set
        return set
    }

    func nullable(_ shape: RegexShape) -> Bool {
        switch shape {
        case .atom: return false
        case .empty: return true
        case .sequence(let items): return items.allSatisfy(nullable)
        case .alternation(let branches): return branches.contains(where: nullable)
        case .repeated(let body, let minimum, _, _, _): return minimum == 0 || nullable(body)
        case .atomic(let inner): return nullable(inner)
        }
    }

    mutating func first(_ shape: RegexShape) -> Set<Int> {
        switch shape {
        case .atom(let text): return characters(of: text)
        case .empty: return []
        case .sequence(let items):
            var set = Set<Int>()
            for item in items {
                set.formUnion(first(item))
                if !nullable(item) { break }
            }
            return set
        case .alternation(let branches): return branches.reduce(into: Set<Int>()) { $0.formUnion(first($1)) }
        case .repeated(let body, _, _, _, _): return first(body)
        case .atomic(let inner): return first(inner)
        }
    }

    mutating func last(_ shape: RegexShape) -> Set<Int> {
        switch shape {
        case .sequence(let items): return first(.sequence(items.reversed().map(reversed)))
        default: return first(reversed(shape))
        }
    }

    func reversed(_ shape: RegexShape) -> RegexShape {
        switch shape {
        case .sequence(let items): return .sequence(items.reversed().map(reversed))
        case .alternation(let branches): return .alternation(branches.map(reversed))
        case .repeated(let body, let minimum, let maximum, let backtracks, let source):
            return .repeated(reversed(body), minimum: minimum, maximum: maximum, backtracks: backtracks, source: source)
        case .atomic(let inner): return .atomic(reversed(inner))
        case .atom, .empty: return shape
        }
    }

    /// A short string `shape` matches (empty when it can match nothing).
    mutating func sample(_ shape: RegexShape) -> String {
        switch shape {
        case .atom(let text): return characters(of: text).min().map { String(Self.alphabet[$0]) } ?? ""
        case .empty: return ""
        case .sequence(let items): return items.map { sample($0) }.joined()
        case .alternation(let branches): return branches.first.map { sample($0) } ?? ""
        case .repeated(let body, let minimum, _, _, _): return String(repeating: sample(body), count: min(minimum, 8))
        case .atomic(let inner): return sample(inner)
        }
    }

    /// The items of a sequence with nested plain sequences flattened.
    func items(of shape: RegexShape) -> [RegexShape] {
        guard case .sequence(let items) = shape else { return [shape] }
        return items.flatMap { self.items(of: $0) }
    }

    mutating func findSuspects(_ shape: RegexShape, prefix: String, into suspects: inout [(PatternRisk.Shape, String, Character, prefix: String)]) {
        switch shape {
        case .atom, .empty: return
        case .atomic: return  // no backtracking into an atomic group
        case .sequence(let items):
            var soFar = prefix
            for item in items {
                findSuspects(item, prefix: soFar, into: &suspects)
                soFar += sample(item)
            }
        case .alternation(let branches):
            for branch in branches { findSuspects(branch, prefix: prefix, into: &suspects) }
        case .repeated(let body, _, let maximum, let backtracks, let source):
            findSuspects(body, prefix: prefix, into: &suspects)
            guard backtracks, maximum.map({ $0 > 1 }) ?? true else { return }
            let parts = items(of: body)
            let bodyFirst = first(body)
            let bodyLast = last(body)
            for (position, part) in parts.enumerated() {
                guard case .repeated(let inner, _, let innerMaximum, let innerBacktracks, _) = part, innerBacktracks,
                      innerMaximum.map({ $0 > 1 }) ?? true else { continue }
                let innerSet = first(inner)
                let endsIteration = parts[(position + 1)...].allSatisfy(nullable)
                let startsIteration = parts[..<position].allSatisfy(nullable)
                let shared = (endsIteration ? innerSet.intersection(bodyFirst) : []).union(startsIteration ? innerSet.intersection(bodyLast) : [])
                if let character = shared.min() {
                    suspects.append((.nestedQuantifier, source, Self.alphabet[character], prefix))
                    return
                }
            }
            if parts.count == 1, case .alternation(let branches) = parts[0] {
                var sets: [Set<Int>] = []
                for branch in branches { sets.append(first(branch)) }
                for i in sets.indices {
                    for j in sets.indices where j > i {
                        if let character = sets[i].intersection(sets[j]).min() {
                            suspects.append((.overlappingAlternatives, source, Self.alphabet[character], prefix))
                            return
                        }
                    }
                }
            }
        }
    }
}

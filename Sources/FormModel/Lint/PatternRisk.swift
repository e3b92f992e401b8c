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
/// Atomic groups and possessive quantifiers do not backtrack and are not suspects.
public struct PatternRisk: Sendable, Hashable {
    public enum Shape: Sendable, Hashable {
        case nestedQuantifier
        case overlappingAlternatives
    }

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
            risks.append(PatternRisk(shape: shape, group: group, sample: sample, confirmed: confirmed))
        }
        return risks.sorted { $0.confirmed && !$1.confirmed }
    }
}

/// A regular expression reduced to the structure that matters for backtracking.
indirect enum RegexShape {
    /// One character out of a set (a literal, `.`, `\d`, `[a-z]`, …), with its source text.
    case atom(String)
    /// Zero-width: anchors, boundaries, lookarounds, flags.
    case empty
    case sequence([RegexShape])
    case alternation([RegexShape])
    /// `body` repeated `minimum`…`maximum` (nil: unbounded) times; `backtracks` is false for possessive repeats.
    case repeated(RegexShape, minimum: Int, maximum: Int?, backtracks: Bool, source: String)
    /// An atomic group `(?>…)`: no backtracking into it.
    case atomic(RegexShape)
}

/// Parses ICU regular-expression syntax into `RegexShape`; nil for anything it does not follow, in which case
/// no risk is reported (the pattern still compiled, and its checks still run under the work limit).
struct RegexShapeParser {
    let pattern: [Character]
    var index = 0
    var depth = 0

    init(pattern: [Character]) { self.pattern = pattern }

    var atEnd: Bool { index >= pattern.count }

    mutating func parseAlternation() -> RegexShape? {
        depth += 1
        defer { depth -= 1 }
        guard depth <= 64 else { return nil }  // patterns are at most PatternMatcher.maximumPatternLength long
        var branches: [RegexShape] = []
        while true {
            guard let branch = parseSequence() else { return nil }
            branches.append(branch)
            if !atEnd, pattern[index] == "|" { index += 1; continue }
            break
        }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    mutating func parseSequence() -> RegexShape? {
        var items: [RegexShape] = []
        while !atEnd, pattern[index] != "|", pattern[index] != ")" {
            let start = index
            guard var item = parseAtom() else { return nil }
            if let (minimum, maximum, backtracks) = parseQuantifier() {
                item = .repeated(item, minimum: minimum, maximum: maximum, backtracks: backtracks, source: String(pattern[start..<index]))
            }
            items.append(item)
        }
        return .sequence(items)
    }

    mutating func parseAtom() -> RegexShape? {
        let start = index
        let character = pattern[index]
        index += 1
        switch character {
        case "(":
            var atomic = false
            var zeroWidth = false
            if index < pattern.count, pattern[index] == "?" {
                index += 1
                guard index < pattern.count else { return nil }
                switch pattern[index] {
                case ":": index += 1
                case ">": index += 1; atomic = true
                case "=", "!": index += 1; zeroWidth = true
                case "<":
                    index += 1
                    if index < pattern.count, pattern[index] == "=" || pattern[index] == "!" {
                        index += 1
                        zeroWidth = true
                    } else {
                        while index < pattern.count, pattern[index] != ">" { index += 1 }
                        index += 1
                    }
                case "#":
                    while index < pattern.count, pattern[index] != ")" { index += 1 }
                    index += 1
                    return .empty
                default:
                    // Flags: (?i) or (?i:…)
                    while index < pattern.count, pattern[index] != ")", pattern[index] != ":" { index += 1 }
                    guard index < pattern.count else { return nil }
                    if pattern[index] == ")" { index += 1; return .empty }
                    index += 1
                }
            }
            guard let inner = parseAlternation(), index < pattern.count, pattern[index] == ")" else { return nil }
            index += 1
            if zeroWidth { return .empty }
            return atomic ? .atomic(inner) : inner
        case "[":
            guard skipClass() else { return nil }
            return .atom(String(pattern[start..<index]))
        case "\\":
            guard index < pattern.count else { return nil }
            let escaped = pattern[index]
            index += 1
            switch escaped {
            case "b", "B", "A", "z", "Z", "G": return .empty
            case "Q":
                var literal: [RegexShape] = []
                while index < pattern.count {
                    if pattern[index] == "\\", index + 1 < pattern.count, pattern[index + 1] == "E" { index += 2; break }
                    literal.append(.atom(NSRegularExpression.escapedPattern(for: String(pattern[index]))))
                    index += 1
                }
                return .sequence(literal)
            case "p", "P", "x", "N":
                if index < pattern.count, pattern[index] == "{" {
                    while index < pattern.count, pattern[index] != "}" { index += 1 }
                    index += 1
                } else if escaped == "x" {
                    index = min(pattern.count, index + 2)
                } else if escaped == "p" || escaped == "P" {
                    index = min(pattern.count, index + 1)
                }
            case "u": index = min(pattern.count, index + 4)
            case "0"..."9":
                while index < pattern.count, pattern[index].isNumber { index += 1 }
            default: break
            }
            return .atom(String(pattern[start..<index]))
        case "^", "$": return .empty
        case "*", "+", "?", "{", ")": return nil
        default: return .atom(String(character))
        }
    }

    /// Skips a character class, nested classes included; false when it is not closed.
    mutating func skipClass() -> Bool {
        var nesting = 1
        if index < pattern.count, pattern[index] == "^" { index += 1 }
        if index < pattern.count, pattern[index] == "]" { index += 1 }
        while index < pattern.count {
            switch pattern[index] {
            case "\\": index += 2
            case "[": nesting += 1; index += 1
            case "]":
                nesting -= 1
                index += 1
                if nesting == 0 { return true }
            default: index += 1
            }
        }
        return false
    }

    mutating func parseQuantifier() -> (Int, Int?, Bool)? {
        guard !atEnd else { return nil }
        var bounds: (Int, Int?)
        switch pattern[index] {
        case "*": bounds = (0, nil); index += 1
        case "+": bounds = (1, nil); index += 1
        case "?": bounds = (0, 1); index += 1
        case "{":
            let start = index
            index += 1
            var numbers: [String] = [""]
            while index < pattern.count, pattern[index] != "}" {
                if pattern[index] == "," { numbers.append("") } else { numbers[numbers.count - 1].append(pattern[index]) }
                index += 1
            }
            guard index < pattern.count, numbers.count <= 2, let low = Int(numbers[0]) else { index = start; return nil }
            index += 1
            bounds = numbers.count == 1 ? (low, low) : (low, numbers[1].isEmpty ? nil : Int(numbers[1]) ?? Int.max)
        default: return nil
        }
        var backtracks = true
        if !atEnd, pattern[index] == "?" { index += 1 } else if !atEnd, pattern[index] == "+" { index += 1; backtracks = false }
        return (bounds.0, bounds.1, backtracks)
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

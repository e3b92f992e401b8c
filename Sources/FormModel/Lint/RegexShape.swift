import Foundation

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

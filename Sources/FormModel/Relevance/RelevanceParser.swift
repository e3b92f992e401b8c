import Foundation

extension RelevanceExpression {
    /// The longest condition, in characters, that is parsed.
    public static let maximumLength = 4_096
    /// How deeply parentheses and `not`s may nest. Chains of `and`/`or` do not nest: they are built as
    /// balanced trees, so the tree's depth (and the stack the evaluator needs) stays small for any condition
    /// the two limits allow.
    public static let maximumNesting = 32

    /// Parses an expression once; the result is evaluated as often as answers change.
    ///
    /// Conditions longer than `maximumLength` or nested deeper than `maximumNesting` are refused with an
    /// error, so no input can exhaust the stack of the parser or of the evaluator.
    public static func parse(_ source: String) throws(RelevanceSyntaxError) -> RelevanceExpression {
        guard source.count <= maximumLength else {
            throw RelevanceSyntaxError(
                message: "The condition is \(source.count) characters long; at most \(maximumLength) are allowed",
                column: maximumLength + 1)
        }
        var parser = RelevanceParser(tokens: try RelevanceLexer.tokens(of: source), sourceLength: source.count)
        let expression = try parser.parseOr()
        if let extra = parser.peek {
            throw RelevanceSyntaxError(message: "Unexpected \(extra.kind.description) after a complete condition", column: extra.column)
        }
        return expression
    }
}

struct RelevanceToken: Equatable {
    enum Kind: Equatable, CustomStringConvertible {
        case identifier(String)
        case string(String)
        case number(Double)
        case symbol(String)

        var description: String {
            switch self {
            case .identifier(let name): return "'\(name)'"
            case .string(let text): return "text '\(text)'"
            case .number(let value): return "number \(AnswerValue.format(value))"
            case .symbol(let symbol): return "'\(symbol)'"
            }
        }
    }

    var kind: Kind
    var column: Int
}

enum RelevanceLexer {
    static let symbols = ["==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "(", ")", "[", "]", ","]

    static func tokens(of source: String) throws(RelevanceSyntaxError) -> [RelevanceToken] {
        let characters = Array(source)
        var tokens: [RelevanceToken] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let column = index + 1
            if character.isWhitespace {
                index += 1
            } else if character == "'" || character == "\"" {
                var text = ""
                index += 1
                while index < characters.count, characters[index] != character {
                    if characters[index] == "\\", index + 1 < characters.count {
                        index += 1
                    }
                    text.append(characters[index])
                    index += 1
                }
                guard index < characters.count else {
                    throw RelevanceSyntaxError(message: "The text starting here is not closed with \(character)", column: column)
                }
                index += 1
                tokens.append(RelevanceToken(kind: .string(text), column: column))
            } else if character.isNumber || (character == "-" && index + 1 < characters.count && characters[index + 1].isNumber) {
                var text = String(character)
                index += 1
                while index < characters.count, characters[index].isNumber || characters[index] == "." {
                    text.append(characters[index])
                    index += 1
                }
                guard let value = Double(text) else {
                    throw RelevanceSyntaxError(message: "'\(text)' is not a number", column: column)
                }
                tokens.append(RelevanceToken(kind: .number(value), column: column))
            } else if character.isLetter || character == "_" {
                var name = ""
                while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_" || characters[index] == "-" {
                    name.append(characters[index])
                    index += 1
                }
                tokens.append(RelevanceToken(kind: .identifier(name), column: column))
            } else if let symbol = symbols.first(where: { matches($0, characters, at: index) }) {
                tokens.append(RelevanceToken(kind: .symbol(symbol), column: column))
                index += symbol.count
            } else if character == "=" {
                throw RelevanceSyntaxError(message: "Use '==' to compare, not '='", column: column)
            } else {
                throw RelevanceSyntaxError(message: "Unexpected character '\(character)'", column: column)
            }
        }
        return tokens
    }

    private static func matches(_ symbol: String, _ characters: [Character], at index: Int) -> Bool {
        let symbolCharacters = Array(symbol)
        guard index + symbolCharacters.count <= characters.count else { return false }
        return Array(characters[index..<index + symbolCharacters.count]) == symbolCharacters
    }
}

struct RelevanceParser {
    var tokens: [RelevanceToken]
    var sourceLength: Int
    var position = 0
    /// Open parentheses and `not`s around the current position.
    var nesting = 0

    var peek: RelevanceToken? { position < tokens.count ? tokens[position] : nil }
    var endColumn: Int { sourceLength + 1 }

    mutating func take(_ symbolOrKeyword: String) -> Bool {
        guard let token = peek else { return false }
        switch token.kind {
        case .symbol(let symbol) where symbol == symbolOrKeyword, .identifier(let symbol) where symbol == symbolOrKeyword:
            position += 1
            return true
        default:
            return false
        }
    }

    mutating func parseOr() throws(RelevanceSyntaxError) -> RelevanceExpression {
        var terms = [try parseAnd()]
        while take("or") || take("||") {
            terms.append(try parseAnd())
        }
        return Self.balanced(terms[...], RelevanceExpression.or)
    }

    mutating func parseAnd() throws(RelevanceSyntaxError) -> RelevanceExpression {
        var terms = [try parseNot()]
        while take("and") || take("&&") {
            terms.append(try parseNot())
        }
        return Self.balanced(terms[...], RelevanceExpression.and)
    }

    /// `a and b and c and d` as `(a and b) and (c and d)`: the same value, evaluated left to right with the same
    /// short-circuits, but a tree as deep as the logarithm of the chain's length rather than the length.
    static func balanced(
        _ terms: ArraySlice<RelevanceExpression>, _ combine: (RelevanceExpression, RelevanceExpression) -> RelevanceExpression
    ) -> RelevanceExpression {
        if terms.count == 1 { return terms[terms.startIndex] }
        let middle = terms.startIndex + (terms.count + 1) / 2
        return combine(balanced(terms[..<middle], combine), balanced(terms[middle...], combine))
    }

    mutating func parseNot() throws(RelevanceSyntaxError) -> RelevanceExpression {
        let start = peek?.column ?? endColumn
        if take("not") || take("!") {
            try enter(at: start)
            defer { nesting -= 1 }
            return .not(try parseNot())
        }
        return try parseComparison()
    }

    /// Counts one more level of nesting, refusing the condition past `maximumNesting`.
    mutating func enter(at column: Int) throws(RelevanceSyntaxError) {
        nesting += 1
        if nesting > RelevanceExpression.maximumNesting {
            throw RelevanceSyntaxError(
                message: "The condition nests parentheses and 'not's more than \(RelevanceExpression.maximumNesting) levels deep",
                column: column)
        }
    }

    mutating func parseComparison() throws(RelevanceSyntaxError) -> RelevanceExpression {
        let left = try parseOperand()
        if let token = peek, case .symbol(let symbol) = token.kind, let comparison = RelevanceExpression.ComparisonOperator(rawValue: symbol) {
            position += 1
            return .compare(left, comparison, try parseOperand())
        }
        if take("in") {
            return .membership(left, in: try parseOperand())
        }
        return left
    }

    mutating func parseOperand() throws(RelevanceSyntaxError) -> RelevanceExpression {
        guard let token = peek else {
            throw RelevanceSyntaxError(message: "The condition ends where a field name or value was expected", column: endColumn)
        }
        position += 1
        switch token.kind {
        case .string(let text): return .literal(.string(text))
        case .number(let value): return .literal(.number(value))
        case .identifier("true"): return .literal(.bool(true))
        case .identifier("false"): return .literal(.bool(false))
        case .identifier("null"): return .literal(.null)
        case .identifier(let name) where ["and", "or", "not", "in"].contains(name):
            throw RelevanceSyntaxError(message: "Expected a field name or value but found the keyword '\(name)'", column: token.column)
        case .identifier(let name): return .field(name)
        case .symbol("("):
            try enter(at: token.column)
            defer { nesting -= 1 }
            let inner = try parseOr()
            guard take(")") else {
                throw RelevanceSyntaxError(message: "Expected ')' to close the '(' at column \(token.column)", column: peek?.column ?? endColumn)
            }
            return inner
        case .symbol("["):
            var items: [RelevanceExpression.Literal] = []
            if take("]") { return .list(items) }
            repeat {
                guard let itemToken = peek else {
                    throw RelevanceSyntaxError(message: "The list is not closed with ']'", column: endColumn)
                }
                position += 1
                switch itemToken.kind {
                case .string(let text): items.append(.string(text))
                case .number(let value): items.append(.number(value))
                case .identifier("true"): items.append(.bool(true))
                case .identifier("false"): items.append(.bool(false))
                default:
                    throw RelevanceSyntaxError(message: "A list holds only text, numbers, true or false; found \(itemToken.kind.description)", column: itemToken.column)
                }
            } while take(",")
            guard take("]") else {
                throw RelevanceSyntaxError(message: "Expected ',' or ']' in the list", column: peek?.column ?? endColumn)
            }
            return .list(items)
        case .symbol(let symbol):
            throw RelevanceSyntaxError(message: "Expected a field name or value but found '\(symbol)'", column: token.column)
        }
    }
}

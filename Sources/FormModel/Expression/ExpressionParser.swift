import Foundation

extension FormExpression {
    /// The longest expression, in characters, that is parsed.
    public static let maximumLength = 4_096
    /// How deeply parentheses, `not`s, unary minuses and function calls may nest. Chains of `and`/`or` are built
    /// as balanced trees and chains of `+ - * / %` are kept flat, so the tree's depth (and the stack the
    /// evaluator needs) stays small for any expression the two limits allow.
    public static let maximumNesting = 32

    /// Parses an expression once; the result is evaluated as often as answers change.
    ///
    /// Expressions longer than `maximumLength` or nested deeper than `maximumNesting` are refused with an
    /// error, so no input can exhaust the stack of the parser or of the evaluator.
    public static func parse(_ source: String) throws(ExpressionSyntaxError) -> FormExpression {
        guard source.count <= maximumLength else {
            throw ExpressionSyntaxError(
                message: "The condition is \(source.count) characters long; at most \(maximumLength) are allowed",
                column: maximumLength + 1)
        }
        var parser = ExpressionParser(tokens: try ExpressionLexer.tokens(of: source), sourceLength: source.count)
        let expression = try parser.parseOr()
        if let extra = parser.peek {
            throw ExpressionSyntaxError(message: "Unexpected \(extra.kind.description) after a complete condition", column: extra.column)
        }
        return expression
    }
}

struct ExpressionToken: Equatable {
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

enum ExpressionLexer {
    static let symbols = ["==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "(", ")", "[", "]", ",", "+", "-", "*", "/", "%", "."]
    /// Function names written with a hyphen, as XLSForm spells them; field ids never hold one.
    /// Longest first, so `format-date-time(` is not read as `format-date` followed by `-time(`.
    static let hyphenatedNames = FormExpression.Function.allCases.map(\.rawValue).filter { $0.contains("-") }.sorted { $0.count > $1.count }

    static func tokens(of source: String) throws(ExpressionSyntaxError) -> [ExpressionToken] {
        let characters = Array(source)
        var tokens: [ExpressionToken] = []
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
                    throw ExpressionSyntaxError(message: "The text starting here is not closed with \(character)", column: column)
                }
                index += 1
                tokens.append(ExpressionToken(kind: .string(text), column: column))
            } else if character.isNumber {
                var text = String(character)
                index += 1
                while index < characters.count, characters[index].isNumber || (characters[index] == "." && index + 1 < characters.count && characters[index + 1].isNumber) {
                    text.append(characters[index])
                    index += 1
                }
                guard let value = Double(text) else {
                    throw ExpressionSyntaxError(message: "'\(text)' is not a number", column: column)
                }
                tokens.append(ExpressionToken(kind: .number(value), column: column))
            } else if character.isLetter || character == "_" {
                var name = ""
                while index < characters.count, isNameCharacter(characters[index]) {
                    name.append(characters[index])
                    index += 1
                }
                // `count-selected(`: a hyphenated function name, not `count - selected`.
                for hyphenated in hyphenatedNames where hyphenated.hasPrefix(name + "-") {
                    let rest = Array(hyphenated.dropFirst(name.count))
                    if index + rest.count <= characters.count, Array(characters[index..<index + rest.count]) == rest,
                       index + rest.count == characters.count || !isNameCharacter(characters[index + rest.count]) {
                        name = hyphenated
                        index += rest.count
                        break
                    }
                }
                tokens.append(ExpressionToken(kind: .identifier(name), column: column))
            } else if let symbol = symbols.first(where: { matches($0, characters, at: index) }) {
                tokens.append(ExpressionToken(kind: .symbol(symbol), column: column))
                index += symbol.count
            } else if character == "=" {
                throw ExpressionSyntaxError(message: "Use '==' to compare, not '='", column: column)
            } else {
                throw ExpressionSyntaxError(message: "Unexpected character '\(character)'", column: column)
            }
        }
        return tokens
    }

    static func isNameCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_"
    }

    private static func matches(_ symbol: String, _ characters: [Character], at index: Int) -> Bool {
        let symbolCharacters = Array(symbol)
        guard index + symbolCharacters.count <= characters.count else { return false }
        return Array(characters[index..<index + symbolCharacters.count]) == symbolCharacters
    }
}

struct ExpressionParser {
    var tokens: [ExpressionToken]
    var sourceLength: Int
    var position = 0
    /// Open parentheses, calls, `not`s and minuses around the current position.
    var nesting = 0

    static let keywords: Set<String> = ["and", "or", "not", "in"]

    var peek: ExpressionToken? { position < tokens.count ? tokens[position] : nil }
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

    mutating func parseOr() throws(ExpressionSyntaxError) -> FormExpression {
        var terms = [try parseAnd()]
        while take("or") || take("||") {
            terms.append(try parseAnd())
        }
        return Self.balanced(terms[...], FormExpression.or)
    }

    mutating func parseAnd() throws(ExpressionSyntaxError) -> FormExpression {
        var terms = [try parseNot()]
        while take("and") || take("&&") {
            terms.append(try parseNot())
        }
        return Self.balanced(terms[...], FormExpression.and)
    }

    /// `a and b and c and d` as `(a and b) and (c and d)`: the same value, evaluated left to right with the same
    /// short-circuits, but a tree as deep as the logarithm of the chain's length rather than the length.
    static func balanced(
        _ terms: ArraySlice<FormExpression>, _ combine: (FormExpression, FormExpression) -> FormExpression
    ) -> FormExpression {
        if terms.count == 1 { return terms[terms.startIndex] }
        let middle = terms.startIndex + (terms.count + 1) / 2
        return combine(balanced(terms[..<middle], combine), balanced(terms[middle...], combine))
    }

    mutating func parseNot() throws(ExpressionSyntaxError) -> FormExpression {
        let start = peek?.column ?? endColumn
        if take("not") || take("!") {
            try enter(at: start)
            defer { nesting -= 1 }
            return .not(try parseNot())
        }
        return try parseComparison()
    }

    /// Counts one more level of nesting, refusing the expression past `maximumNesting`.
    mutating func enter(at column: Int) throws(ExpressionSyntaxError) {
        nesting += 1
        if nesting > FormExpression.maximumNesting {
            throw ExpressionSyntaxError(
                message: "The condition nests parentheses, calls and 'not's more than \(FormExpression.maximumNesting) levels deep",
                column: column)
        }
    }

    mutating func parseComparison() throws(ExpressionSyntaxError) -> FormExpression {
        let left = try parseSum()
        if let token = peek, case .symbol(let symbol) = token.kind, let comparison = FormExpression.ComparisonOperator(rawValue: symbol) {
            position += 1
            return .compare(left, comparison, try parseSum())
        }
        if take("in") {
            return .membership(left, in: try parseSum())
        }
        return left
    }

    mutating func parseSum() throws(ExpressionSyntaxError) -> FormExpression {
        try parseChain(operators: [.add, .subtract]) { (parser: inout ExpressionParser) throws(ExpressionSyntaxError) in try parser.parseProduct() }
    }

    mutating func parseProduct() throws(ExpressionSyntaxError) -> FormExpression {
        try parseChain(operators: [.multiply, .divide, .remainder]) { (parser: inout ExpressionParser) throws(ExpressionSyntaxError) in try parser.parseUnary() }
    }

    mutating func parseChain(
        operators: [FormExpression.ArithmeticOperator],
        operand: (inout ExpressionParser) throws(ExpressionSyntaxError) -> FormExpression
    ) throws(ExpressionSyntaxError) -> FormExpression {
        let first = try operand(&self)
        var steps: [FormExpression.ArithmeticStep] = []
        while let token = peek, case .symbol(let symbol) = token.kind, let operation = FormExpression.ArithmeticOperator(rawValue: symbol), operators.contains(operation) {
            position += 1
            steps.append(FormExpression.ArithmeticStep(operation: operation, operand: try operand(&self)))
        }
        if steps.isEmpty { return first }
        return .arithmetic(first, steps)
    }

    mutating func parseUnary() throws(ExpressionSyntaxError) -> FormExpression {
        let start = peek?.column ?? endColumn
        if take("-") {
            try enter(at: start)
            defer { nesting -= 1 }
            let inner = try parseUnary()
            if case .literal(.number(let value)) = inner { return .literal(.number(-value)) }
            return .negate(inner)
        }
        return try parseOperand()
    }

    mutating func parseOperand() throws(ExpressionSyntaxError) -> FormExpression {
        guard let token = peek else {
            throw ExpressionSyntaxError(message: "The condition ends where a field name or value was expected", column: endColumn)
        }
        position += 1
        switch token.kind {
        case .string(let text): return .literal(.string(text))
        case .number(let value): return .literal(.number(value))
        case .identifier("true"): return .literal(.bool(true))
        case .identifier("false"): return .literal(.bool(false))
        case .identifier("null"): return .literal(.null)
        case .identifier(let name) where Self.keywords.contains(name):
            throw ExpressionSyntaxError(message: "Expected a field name or value but found the keyword '\(name)'", column: token.column)
        case .identifier(let name):
            if let next = peek, next.kind == .symbol("(") {
                return try parseCall(name, at: token.column)
            }
            var path = [name]
            while take(".") {
                guard let part = peek, case .identifier(let child) = part.kind, !Self.keywords.contains(child) else {
                    throw ExpressionSyntaxError(message: "Expected a field name after '.' in '\(path.joined(separator: "."))'", column: peek?.column ?? endColumn)
                }
                position += 1
                path.append(child)
            }
            return .name(path)
        case .symbol("."):
            return .current
        case .symbol("("):
            try enter(at: token.column)
            defer { nesting -= 1 }
            let inner = try parseOr()
            guard take(")") else {
                throw ExpressionSyntaxError(message: "Expected ')' to close the '(' at column \(token.column)", column: peek?.column ?? endColumn)
            }
            return inner
        case .symbol("["):
            return .list(try parseListItems())
        case .symbol(let symbol):
            throw ExpressionSyntaxError(message: "Expected a field name or value but found '\(symbol)'", column: token.column)
        }
    }

    mutating func parseCall(_ name: String, at column: Int) throws(ExpressionSyntaxError) -> FormExpression {
        if name == "entity" { return try parseEntity(at: column) }
        guard let function = FormExpression.Function(rawValue: name) else {
            let known = FormExpression.Function.allCases.map(\.rawValue).joined(separator: ", ")
            throw ExpressionSyntaxError(message: "'\(name)' is not a function; known functions: \(known)", column: column)
        }
        position += 1  // "("
        try enter(at: column)
        defer { nesting -= 1 }
        var arguments: [FormExpression] = []
        if !take(")") {
            repeat {
                arguments.append(try parseOr())
            } while take(",")
            guard take(")") else {
                throw ExpressionSyntaxError(message: "Expected ',' or ')' in the call of \(name)()", column: peek?.column ?? endColumn)
            }
        }
        guard function.arity.contains(arguments.count) else {
            let expected = function.arity.count == 1 ? "\(function.arity.lowerBound)" : "\(function.arity.lowerBound) to \(function.arity.upperBound)"
            throw ExpressionSyntaxError(
                message: "\(name)() takes \(expected) argument\(function.arity.upperBound == 1 ? "" : "s") but is given \(arguments.count); write \(function.signature)",
                column: column)
        }
        return .call(function, arguments)
    }

    /// `entity('list', id, 'property')`, the list and the property written as text.
    mutating func parseEntity(at column: Int) throws(ExpressionSyntaxError) -> FormExpression {
        let signature = "write entity('households', household, 'members'): the entity list and the property in quotes"
        position += 1  // "("
        try enter(at: column)
        defer { nesting -= 1 }
        func name(_ what: String) throws(ExpressionSyntaxError) -> String {
            guard let token = peek, case .string(let text) = token.kind,
                  text.range(of: #"^[A-Za-z_][A-Za-z0-9_.-]*$"#, options: .regularExpression) != nil else {
                throw ExpressionSyntaxError(message: "entity() needs the \(what) as a name in quotes; \(signature)", column: peek?.column ?? endColumn)
            }
            position += 1
            return text
        }
        let list = try name("entity list")
        guard take(",") else { throw ExpressionSyntaxError(message: "Expected ',' after the entity list; \(signature)", column: peek?.column ?? endColumn) }
        let id = try parseOr()
        guard take(",") else { throw ExpressionSyntaxError(message: "Expected ',' after the entity's id; \(signature)", column: peek?.column ?? endColumn) }
        let property = try name("property")
        guard take(")") else { throw ExpressionSyntaxError(message: "Expected ')' after the property; \(signature)", column: peek?.column ?? endColumn) }
        return .entity(list: list, id: id, property: property)
    }

    mutating func parseListItems() throws(ExpressionSyntaxError) -> [FormExpression.Literal] {
        var items: [FormExpression.Literal] = []
        if take("]") { return items }
        repeat {
            guard let itemToken = peek else {
                throw ExpressionSyntaxError(message: "The list is not closed with ']'", column: endColumn)
            }
            position += 1
            switch itemToken.kind {
            case .string(let text): items.append(.string(text))
            case .number(let value): items.append(.number(value))
            case .symbol("-"):
                guard let number = peek, case .number(let value) = number.kind else {
                    throw ExpressionSyntaxError(message: "A list holds only text, numbers, true or false; found '-'", column: itemToken.column)
                }
                position += 1
                items.append(.number(-value))
            case .identifier("true"): items.append(.bool(true))
            case .identifier("false"): items.append(.bool(false))
            default:
                throw ExpressionSyntaxError(message: "A list holds only text, numbers, true or false; found \(itemToken.kind.description)", column: itemToken.column)
            }
        } while take(",")
        guard take("]") else {
            throw ExpressionSyntaxError(message: "Expected ',' or ']' in the list", column: peek?.column ?? endColumn)
        }
        return items
    }
}

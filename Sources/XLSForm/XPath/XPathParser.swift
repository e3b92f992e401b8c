/// A recursive-descent parser for XLSForm's XPath subset (XPath 1.0's expression grammar with location paths
/// only to a question, `/data/group/name` or `../name`, read as `${name}`; other paths, predicates and unions
/// are refused with the column where they start):
/// ```
/// or             := and ("or" and)*
/// and            := equality ("and" equality)*
/// equality       := relational (("=" | "!=") relational)*
/// relational     := additive (("<" | "<=" | ">" | ">=") additive)*
/// additive       := multiplicative (("+" | "-") multiplicative)*
/// multiplicative := unary (("*" | "div" | "mod") unary)*
/// unary          := "-" unary | primary
/// primary        := ${name} | "." | 'text' | number | name "(" arguments ")" | name | "(" or ")" | path | lookup
/// path           := ("/" name)+ | ".." ("/" "..")* ("/" name)+
/// lookup         := "instance" "(" 'list' ")" "/" "root" "/" "item" "[" "name" "=" or "]" "/" name
/// ```
struct XPathParser {
    /// The longest expression read, as FieldSheet's own expressions.
    static let maximumLength = 4_096
    /// How deeply parentheses, calls and minuses may nest.
    static let maximumNesting = 32

    private var tokens: [XPathToken]
    private var position = 0
    private var nesting = 0
    private let endColumn: Int

    static func parse(_ source: String) throws(XPathError) -> XPathExpression {
        guard source.count <= maximumLength else {
            throw XPathError(message: "The expression is \(source.count) characters long; at most \(maximumLength) are read", column: maximumLength + 1,
                             fix: "Split it over calculate rows.")
        }
        var parser = XPathParser(tokens: try XPathLexer.tokens(of: source), endColumn: source.count + 1)
        guard parser.peek != nil else {
            throw XPathError(message: "The expression is empty", column: 1, fix: "Write an expression, or leave the cell empty.")
        }
        let expression = try parser.parseBinary(level: 1)
        if let extra = parser.peek {
            throw parser.unexpected(extra, after: "a complete expression")
        }
        return expression
    }

    private init(tokens: [XPathToken], endColumn: Int) {
        self.tokens = tokens
        self.endColumn = endColumn
    }

    private var peek: XPathToken? { position < tokens.count ? tokens[position] : nil }

    private mutating func take(symbol: String) -> Bool {
        guard case .symbol(symbol)? = peek?.kind else { return false }
        position += 1
        return true
    }

    /// The operator at the current token, when it is one of `level`'s.
    private func binaryOperator(at level: Int) -> XPathOperator? {
        guard let token = peek else { return nil }
        let op: XPathOperator?
        switch token.kind {
        case .symbol(let symbol): op = XPathOperator(rawValue: symbol)
        case .name(let name) where ["and", "or", "div", "mod"].contains(name): op = XPathOperator(rawValue: name)
        default: op = nil
        }
        guard let op, op.precedence == level, op != .divide || token.kind == .name("div") else { return nil }
        return op
    }

    private mutating func parseBinary(level: Int) throws(XPathError) -> XPathExpression {
        if level > 6 { return try parseUnary() }
        var left = try parseBinary(level: level + 1)
        var count = 0
        while let op = binaryOperator(at: level) {
            position += 1
            count += 1
            if count > 256 {
                throw XPathError(message: "The expression chains more than 256 operators", column: peek?.column ?? endColumn, fix: "Split it over calculate rows.")
            }
            let right = try parseBinary(level: level + 1)
            left = .binary(op, left, right)
        }
        return left
    }

    private mutating func enter(at column: Int) throws(XPathError) {
        nesting += 1
        if nesting > Self.maximumNesting {
            throw XPathError(message: "The expression nests parentheses, calls and minuses more than \(Self.maximumNesting) levels deep", column: column,
                             fix: "Split it over calculate rows.")
        }
    }

    private mutating func parseUnary() throws(XPathError) -> XPathExpression {
        let column = peek?.column ?? endColumn
        if take(symbol: "-") {
            try enter(at: column)
            defer { nesting -= 1 }
            return .negate(try parseUnary())
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws(XPathError) -> XPathExpression {
        guard let token = peek else {
            throw XPathError(message: "The expression ends where a value was expected", column: endColumn, fix: "Complete the expression.")
        }
        position += 1
        switch token.kind {
        case .reference(let name): return .reference(name, column: token.column)
        case .string(let text): return .string(text)
        case .number(let number): return .number(number)
        case .symbol("."): return .current
        case .symbol("("):
            try enter(at: token.column)
            defer { nesting -= 1 }
            let inner = try parseBinary(level: 1)
            guard take(symbol: ")") else { throw unexpected(peek, after: "the parenthesised expression started at column \(token.column)", expected: "')'") }
            return inner
        case .name(let name):
            guard take(symbol: "(") else {
                if case .symbol(let symbol)? = peek?.kind, ["/", "//", "["].contains(symbol) { throw pathRefused(at: token.column) }
                return .name(name, column: token.column)
            }
            try enter(at: token.column)
            defer { nesting -= 1 }
            if name == "instance" { return try parseLookup(at: token.column) }
            // position(..): the number of the repeat instance the expression is in (FieldSheet's position()).
            if name == "position", peek?.kind == .symbol(".."), tokens.indices.contains(position + 1), tokens[position + 1].kind == .symbol(")") {
                position += 2
                return .call(name, [], column: token.column)
            }
            var arguments: [XPathExpression] = []
            if !take(symbol: ")") {
                repeat {
                    if arguments.count >= 64 {
                        throw XPathError(message: "\(name)() is given more than 64 arguments", column: token.column, fix: "Split it over calculate rows.")
                    }
                    arguments.append(try parseBinary(level: 1))
                } while take(symbol: ",")
                guard take(symbol: ")") else { throw unexpected(peek, after: "the arguments of \(name)()", expected: "',' or ')'") }
            }
            return .call(name, arguments, column: token.column)
        case .symbol("/"), .symbol(".."):
            return try parsePath(startingWith: token)
        case .symbol("//"), .symbol("@"), .symbol("["):
            throw pathRefused(at: token.column)
        case .symbol:
            throw unexpected(token, after: nil)
        }
    }

    /// `instance('LIST')/root/item[name = key]/property`, after `instance(`: an entity's property, as ODK forms
    /// read an entity list (the key may stand on either side of `=`).
    private mutating func parseLookup(at column: Int) throws(XPathError) -> XPathExpression {
        let fix = "Write instance('households')/root/item[name = ${household}]/property."
        func refuse(_ what: String) -> XPathError {
            XPathError(message: "instance() is read only as a lookup in an entity list, instance('LIST')/root/item[name = …]/property; \(what)", column: peek?.column ?? endColumn, fix: fix)
        }
        guard case .string(let list)? = peek?.kind else { throw refuse("the list's name in quotes is missing") }
        position += 1
        guard take(symbol: ")") else { throw refuse("expected ')' after the list's name") }
        for step in ["root", "item"] {
            guard take(symbol: "/"), peek?.kind == .name(step) else { throw refuse("expected /\(step)") }
            position += 1
        }
        guard take(symbol: "[") else { throw refuse("expected [name = …] after item") }
        let predicate = try parseBinary(level: 1)
        guard take(symbol: "]") else { throw refuse("expected ']' after the item's condition") }
        let key: XPathExpression
        switch predicate {
        case .binary(.equal, .name("name", _), let other), .binary(.equal, let other, .name("name", _)): key = other
        default: throw refuse("the item's condition must be name = the entity's id")
        }
        guard take(symbol: "/"), case .name(let property)? = peek?.kind else { throw refuse("expected /property after the item") }
        position += 1
        return .entityLookup(list: list, key: key, property: property, column: column)
    }

    /// `/data/group/name` or `../name`, `../../name`: the question the path ends at, read as `${name}` (a name
    /// is unique in the form unless a finding says otherwise); the steps before it are not checked.
    private mutating func parsePath(startingWith first: XPathToken) throws(XPathError) -> XPathExpression {
        var last: String?
        var expectsStep = first.kind == .symbol("/")
        while let token = peek {
            if expectsStep {
                switch token.kind {
                case .name(let name): last = name
                case .symbol("..") where last == nil: break
                default: throw pathRefused(at: token.column)
                }
                position += 1
                expectsStep = false
            } else if token.kind == .symbol("/") {
                position += 1
                expectsStep = true
            } else if case .symbol(let symbol) = token.kind, ["//", "[", "@", "("].contains(symbol) {
                throw pathRefused(at: token.column)
            } else {
                break
            }
        }
        guard let last, !expectsStep else { throw pathRefused(at: first.column) }
        return .reference(last, column: first.column)
    }

    private func pathRefused(at column: Int) -> XPathError {
        XPathError(message: "XPath paths other than /data/…/name and ../name (//, [predicates], @attributes, a path to a group) are not translated", column: column,
                   fix: "Refer to other questions as ${name}.")
    }

    private func unexpected(_ token: XPathToken?, after: String?, expected: String? = nil) -> XPathError {
        let found = token.map { "'\($0.shown)'" } ?? "the end of the expression"
        let context = after.map { " after \($0)" } ?? ""
        return XPathError(message: "Unexpected \(found)\(context)" + (expected.map { "; expected \($0)" } ?? ""),
                          column: token?.column ?? endColumn, fix: "Correct the expression at that column.")
    }
}

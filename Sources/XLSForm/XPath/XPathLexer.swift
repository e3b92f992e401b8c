/// Splits an XLSForm expression into tokens: `${name}` references, quoted text, numbers, names (which in
/// XPath may hold `-`, `.` and a `prefix:`), and symbols. `and`, `or`, `div` and `mod` are names here; the
/// parser reads them as operators where an operator is expected, as XPath does.
struct XPathToken: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case reference(String)
        case string(String)
        case number(Double)
        case name(String)
        case symbol(String)
    }

    var kind: Kind
    var column: Int

    var shown: String {
        switch kind {
        case .reference(let name): return "${\(name)}"
        case .string(let text): return "'\(text)'"
        case .number(let number): return CellValue.number(number).text
        case .name(let name): return name
        case .symbol(let symbol): return symbol
        }
    }
}

enum XPathLexer {
    static let symbols = ["!=", "<=", ">=", "//", "..", "=", "<", ">", "+", "-", "*", "(", ")", ",", "|", "/", "[", "]", "@", ".", "$"]

    static func tokens(of source: String) throws(XPathError) -> [XPathToken] {
        let characters = Array(source)
        var tokens: [XPathToken] = []
        var index = 0
        func isNameStart(_ character: Character) -> Bool { character.isLetter || character == "_" }
        func isNameCharacter(_ character: Character) -> Bool {
            character.isLetter || character.isNumber || character == "_" || character == "-" || character == "."
        }
        while index < characters.count {
            let character = characters[index]
            let column = index + 1
            if character.isWhitespace {
                index += 1
            } else if character == "$", index + 1 < characters.count, characters[index + 1] == "{" {
                var end = index + 2
                while end < characters.count, characters[end] != "}" { end += 1 }
                guard end < characters.count else {
                    throw XPathError(message: "The reference starting here is not closed with '}'", column: column, fix: "Write a reference as ${name}.")
                }
                let name = String(characters[(index + 2)..<end]).trimmingCharacters(in: .whitespaces)
                guard let first = name.first, isNameStart(first), name.allSatisfy(isNameCharacter) else {
                    throw XPathError(message: "\"${\(name)}\" is not a reference to a question name", column: column,
                                     fix: "Write ${name} with the name of a question from the name column.")
                }
                tokens.append(XPathToken(kind: .reference(name), column: column))
                index = end + 1
            } else if character == "'" || character == "\"" {
                var end = index + 1
                while end < characters.count, characters[end] != character { end += 1 }
                guard end < characters.count else {
                    throw XPathError(message: "The text starting here is not closed with \(character)", column: column, fix: "Close the text with \(character).")
                }
                tokens.append(XPathToken(kind: .string(String(characters[(index + 1)..<end])), column: column))
                index = end + 1
            } else if character.isASCII, character.isNumber || (character == "." && index + 1 < characters.count && characters[index + 1].isASCII && characters[index + 1].isNumber) {
                var end = index
                var seenPoint = false
                while end < characters.count, characters[end].isASCII, characters[end].isNumber || (characters[end] == "." && !seenPoint) {
                    if characters[end] == "." { seenPoint = true }
                    end += 1
                }
                let text = String(characters[index..<end])
                guard let value = Double(text), value.isFinite else {
                    throw XPathError(message: "'\(text)' is not a number", column: column, fix: "Write numbers like 12 or 0.5.")
                }
                tokens.append(XPathToken(kind: .number(value), column: column))
                index = end
            } else if isNameStart(character) {
                var end = index
                while end < characters.count {
                    if isNameCharacter(characters[end]) || (characters[end] == ":" && end + 1 < characters.count && isNameStart(characters[end + 1])) {
                        end += 1
                    } else if characters[end] == ":", end + 2 < characters.count, characters[end + 1] == ":", isNameStart(characters[end + 2]) {
                        end += 2  // a translated column, `label::English`, in a choice filter
                    } else {
                        break
                    }
                }
                // A name does not end with '.' or '-' in any expression people write (`a.` is rare; `x-` never).
                while end > index + 1, characters[end - 1] == "." || characters[end - 1] == "-" { end -= 1 }
                tokens.append(XPathToken(kind: .name(String(characters[index..<end])), column: column))
                index = end
            } else if let symbol = symbols.first(where: { matches($0, characters, at: index) }) {
                tokens.append(XPathToken(kind: .symbol(symbol), column: column))
                index += symbol.count
            } else {
                throw XPathError(message: "Unexpected character '\(character)'", column: column,
                                 fix: "Use the operators of XLSForm expressions: = != < <= > >= + - * div mod and or.")
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

import FormModel

/// Translates XLSForm's XPath subset into FieldSheet's expression language (FormExpression), node by node
/// over the parsed tree. Whatever has no FieldSheet equivalent is an error with its column, never dropped.
///
/// | XLSForm | FieldSheet |
/// |---|---|
/// | `${name}`, `/data/group/name`, `../name` | `name` (`repeat.name` read from outside its repeat) |
/// | `.` | `.` |
/// | `=` `!=` `<` `<=` `>` `>=` | `==` `!=` `<` `<=` `>` `>=` |
/// | `+` `-` `*` `div` `mod` | `+` `-` `*` `/` `%` |
/// | `and` `or` `not(x)` `true()` `false()` | `and` `or` `not (x)` `true` `false` |
/// | `selected` `count-selected` `if` `concat` `string-length` `today` `now` `sum` `count` `min` `max` `round` `coalesce` `sqrt` `pow` `int` `number` `string` `substr` `contains` `starts-with` `ends-with` `normalize-space` `boolean-from-string` `regex` `date` `decimal-date-time` `count-non-empty` `format-date` `format-date-time` `sin` `cos` `tan` `asin` `acos` `atan` `exp` `log` `log10` `pi` `uuid` `once` `area` `distance` | the same |
/// | `jr:choice-name(value, '${field}')` | `choice-label(value, 'field')` |
/// | `indexed-repeat(${field}, ${repeat}, n)` | `indexed-repeat(repeat.field, n)` |
/// | a bare name in a `choice_filter` | `choice.name` (`name` is `choice.value`, `label` is `choice.label`) |
/// | `instance('LIST')/root/item[name = ${q}]/property`, `pulldata('LIST', 'property', 'name', ${q})` | `entity('LIST', q, 'property')` |
struct XPathTranslator {
    /// What a `${name}` reference becomes.
    enum Resolution {
        /// How it is written in FieldSheet from where the expression is (`cost`, or `defects.cost`).
        case path(String)
        /// What holds no value in FieldSheet (a SIM's serial, a note): read as null (nothing), and warned about
        /// under `rule`.
        case empty(message: String, rule: String = "xlsform-metadata")
        /// Why it cannot be read: no such question, a group, metadata that is not imported.
        case refused(message: String, fix: String)
    }

    /// How a `${name}` reference is written in FieldSheet from where the expression is.
    var resolve: (String) -> Resolution
    /// Whether bare names are columns of the choices sheet (a `choice_filter`).
    var isChoiceFilter = false
    /// The form's default language, which `label::LANGUAGE` in a choice filter may name (`choice.label`).
    var defaultLanguage: String? = nil
    /// The choices sheet's lists: `instance('LIST')/…` of one of them is not read as an entity list.
    var choiceLists: Set<String> = []

    /// The functions translated, with the arguments each takes.
    static let functions: [String: ClosedRange<Int>] = [
        "if": 3...3, "coalesce": 2...16, "selected": 2...2, "count-selected": 1...1, "string-length": 1...1,
        "concat": 1...64, "today": 0...0, "now": 0...0, "sum": 1...1, "count": 1...1, "min": 1...16, "max": 1...16,
        "round": 1...2, "not": 1...1, "true": 0...0, "false": 0...0,
        "sqrt": 1...1, "pow": 2...2, "int": 1...1, "number": 1...1, "string": 1...1, "substr": 2...3, "contains": 2...2,
        "starts-with": 2...2, "ends-with": 2...2, "normalize-space": 1...1, "boolean-from-string": 1...1, "regex": 2...2,
        "date": 1...1, "decimal-date-time": 1...1, "count-non-empty": 1...1, "format-date": 2...2, "format-date-time": 2...2, "jr:choice-name": 2...2,
        "sin": 1...1, "cos": 1...1, "tan": 1...1, "asin": 1...1, "acos": 1...1, "atan": 1...1, "exp": 1...1, "log": 1...1,
        "log10": 1...1, "pi": 0...0, "position": 0...0, "indexed-repeat": 3...3, "uuid": 0...0, "once": 1...1,
        "area": 1...1, "distance": 1...1,
    ]

    /// Words of FieldSheet's expressions that cannot follow `choice.`.
    static let keywords: Set<String> = ["and", "or", "not", "in", "true", "false", "null"]

    /// FieldSheet's binding strengths: or 1, and 2, not 3, comparison 4, sum 5, product 6, minus 7, operand 8.
    private typealias Rendered = (text: String, level: Int)

    func translate(_ source: String) throws(XPathError) -> String {
        try render(XPathParser.parse(source)).text
    }

    private func render(_ expression: XPathExpression) throws(XPathError) -> Rendered {
        switch expression {
        case .reference(let name, let column):
            switch resolve(name) {
            case .path(let path): return (path, 8)
            case .empty: return ("null", 8)
            case .refused(let message, let fix): throw XPathError(message: message, column: column, fix: fix)
            }
        case .current:
            return (".", 8)
        case .name(let name, let column):
            guard isChoiceFilter else {
                throw XPathError(message: "'\(name)' is a bare name; XLSForm refers to questions as ${name}", column: column,
                                 fix: "Write ${\(name)} if it is a question, or quote it ('\(name)') if it is text.")
            }
            switch name {
            case "name": return ("choice.value", 8)
            case "label": return ("choice.label", 8)
            case _ where name.hasPrefix("label::"):
                // The choice's label in a language: FieldSheet's filters read the default language's.
                let language = String(name.dropFirst("label::".count))
                guard let defaultLanguage, language.caseInsensitiveCompare(defaultLanguage) == .orderedSame else {
                    throw XPathError(message: "'\(name)' reads the choices' labels in \(language); a FieldSheet filter reads them in the form's default language\(defaultLanguage.map { " (\($0))" } ?? "")", column: column,
                                     fix: "Filter by the choices' names or another column, or make \(language) the default_language in the settings sheet.")
                }
                return ("choice.label", 8)
            default:
                guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), !Self.keywords.contains(name) else {
                    throw XPathError(message: "The choices column '\(name)' cannot be named in a FieldSheet filter", column: column,
                                     fix: "Rename the column with letters, digits and _ only, other than and, or, not, in, true, false and null.")
                }
                return ("choice.\(name)", 8)
            }
        case .string(let text):
            return (Self.quote(text), 8)
        case .number(let number):
            return (try Self.format(number), 8)
        case .negate(let inner):
            return ("-" + (try operand(inner, atLeast: 7)), 7)
        case .binary(let op, let left, let right):
            return try binary(op, left, right)
        case .call(let name, let arguments, let column):
            return try call(name, arguments, column)
        case .entityLookup(let list, let key, let property, let column):
            guard !choiceLists.contains(list) else {
                throw XPathError(message: "instance('\(list)') reads the choices sheet's list \(list), not an entity list", column: column,
                                 fix: "Read a choice's label with jr:choice-name(${question}, '${question}').")
            }
            guard list.range(of: #"^[A-Za-z_][A-Za-z0-9_-]*$"#, options: .regularExpression) != nil,
                  property.range(of: #"^[A-Za-z_][A-Za-z0-9_.-]*$"#, options: .regularExpression) != nil else {
                throw XPathError(message: "instance('\(list)')/…/\(property) does not name an entity list and a property FieldSheet reads", column: column,
                                 fix: "Name the list and the property with letters, digits, _ and -.")
            }
            return ("entity(\(Self.quote(list)), \(try render(key).text), \(Self.quote(property)))", 8)
        }
    }

    private func operand(_ expression: XPathExpression, atLeast level: Int) throws(XPathError) -> String {
        let rendered = try render(expression)
        return rendered.level >= level ? rendered.text : "(\(rendered.text))"
    }

    private func binary(_ op: XPathOperator, _ left: XPathExpression, _ right: XPathExpression) throws(XPathError) -> Rendered {
        let (symbol, level): (String, Int)
        switch op {
        case .or: (symbol, level) = ("or", 1)
        case .and: (symbol, level) = ("and", 2)
        case .equal: (symbol, level) = ("==", 4)
        case .notEqual: (symbol, level) = ("!=", 4)
        case .less: (symbol, level) = ("<", 4)
        case .lessOrEqual: (symbol, level) = ("<=", 4)
        case .greater: (symbol, level) = (">", 4)
        case .greaterOrEqual: (symbol, level) = (">=", 4)
        case .add: (symbol, level) = ("+", 5)
        case .subtract: (symbol, level) = ("-", 5)
        case .multiply: (symbol, level) = ("*", 6)
        case .divide: (symbol, level) = ("/", 6)
        case .modulo: (symbol, level) = ("%", 6)
        }
        // Comparisons do not chain in FieldSheet: `a = b = c` keeps XPath's meaning as `(a == b) == c`.
        let leftLevel = level == 4 ? 5 : level
        return ("\(try operand(left, atLeast: leftLevel)) \(symbol) \(try operand(right, atLeast: level + 1))", level)
    }

    private func call(_ name: String, _ arguments: [XPathExpression], _ column: Int) throws(XPathError) -> Rendered {
        if name == "pulldata" {
            // pulldata('LIST', 'column', 'name', key) reads LIST.csv's row whose name is key: as a file LIST.csv
            // of select_one_from_file is the entity list LIST, this is instance('LIST')/root/item[name = key]/column.
            guard arguments.count == 4, case .string(let list) = arguments[0], case .string(let property) = arguments[1],
                  case .string(let keyColumn) = arguments[2] else {
                throw XPathError(message: "pulldata() takes the file's name, the column to read, the column to look in and the value to look for, the first three quoted", column: column,
                                 fix: "Write pulldata('LIST', 'column', 'name', ${key}).")
            }
            guard keyColumn == "name" else {
                throw XPathError(message: "pulldata() looks up the rows of the CSV file \(list).csv by its column '\(keyColumn)'; FieldSheet reads such a file as the entity list \(list), whose rows are looked up by their name", column: column,
                                 fix: "Look the row up by its name, pulldata('\(list)', '\(property)', 'name', ${key}), or copy the values into the choices sheet (a select_one and a choice_filter) or into calculations.")
            }
            return try render(.entityLookup(list: list, key: arguments[3], property: property, column: column))
        }
        guard let arity = Self.functions[name] else {
            throw XPathError(message: "The function \(name)() has no FieldSheet equivalent and is not translated", column: column,
                             fix: "Use \(Self.functions.keys.sorted().map { $0 + "()" }.joined(separator: ", ")), or compute the value another way.")
        }
        guard arity.contains(arguments.count) else {
            let expected = arity.lowerBound == arity.upperBound ? "\(arity.lowerBound)" : "\(arity.lowerBound) to \(arity.upperBound)"
            throw XPathError(message: "\(name)() takes \(expected) argument\(arity.upperBound == 1 ? "" : "s"), not \(arguments.count)", column: column,
                             fix: "Correct the call's arguments.")
        }
        switch name {
        case "true": return ("true", 8)
        case "false": return ("false", 8)
        case "not": return ("not " + (try operand(arguments[0], atLeast: 8)), 3)
        case "jr:choice-name":
            // jr:choice-name(value, '${field}'): the field is named in a string; FieldSheet's choice-label names it by id.
            guard case .string(let quoted) = arguments[1], quoted.hasPrefix("${"), quoted.hasSuffix("}"),
                  case .path(let path) = resolve(String(quoted.dropFirst(2).dropLast())), let id = path.split(separator: ".").last else {
                throw XPathError(message: "jr:choice-name() needs the choice question as its second argument, written '${question}'", column: column,
                                 fix: "Write jr:choice-name(${question}, '${question}').")
            }
            return ("choice-label(\(try render(arguments[0]).text), \(Self.quote(String(id))))", 8)
        case "indexed-repeat":
            // indexed-repeat(${field}, ${repeat}, n): FieldSheet names the field through its repeat, repeat.field.
            // The forms with more pairs (a repeat inside a repeat) take 5 or 7 arguments and are refused above.
            guard case .path(let group) = try resolveReference(arguments[1]), !group.contains("."),
                  case .path(let field) = try resolveReference(arguments[0]), let id = field.split(separator: ".").last else {
                throw XPathError(message: "indexed-repeat() needs a question and the repeat it is directly in, written ${question} and ${repeat}, and cannot read a repeat inside another from outside both", column: column,
                                 fix: "Write indexed-repeat(${question}, ${repeat}, number).")
            }
            return ("indexed-repeat(\(group).\(id), \(try render(arguments[2]).text))", 8)
        default:
            var rendered: [String] = []
            for argument in arguments { rendered.append(try render(argument).text) }
            return ("\(name)(\(rendered.joined(separator: ", ")))", 8)
        }
    }

    /// What a `${name}` argument resolves to; nil for an argument that is no reference.
    private func resolveReference(_ argument: XPathExpression) throws(XPathError) -> Resolution? {
        guard case .reference(let name, let column) = argument else { return nil }
        let resolution = resolve(name)
        if case .refused(let message, let fix) = resolution { throw XPathError(message: message, column: column, fix: fix) }
        return resolution
    }

    /// Text in single quotes, with `'` and `\` escaped as FieldSheet's expressions read them.
    static func quote(_ text: String) -> String {
        var quoted = "'"
        for character in text {
            if character == "'" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "'"
    }

    /// A number as FieldSheet's expressions write it: digits with an optional fraction, no exponent.
    static func format(_ number: Double) throws(XPathError) -> String {
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        let text = String(number)
        guard !text.contains("e") else {
            throw XPathError(message: "The number \(text) is too large or too small to write", column: 1, fix: "Use a number between 1e-6 and 1e15.")
        }
        return text
    }
}

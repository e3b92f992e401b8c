/// An expression of XLSForm's XPath subset, parsed: what a `relevant`, `constraint`, `calculation`,
/// `choice_filter`, dynamic `default` or `repeat_count` cell holds.
indirect enum XPathExpression: Sendable, Hashable {
    /// `${name}`: another question's answer.
    case reference(String, column: Int)
    /// `.`: the answer of the question the expression belongs to.
    case current
    /// A bare name (`severity`): in a `choice_filter`, a column of the choices sheet.
    case name(String, column: Int)
    case string(String)
    case number(Double)
    case binary(XPathOperator, XPathExpression, XPathExpression)
    case negate(XPathExpression)
    case call(String, [XPathExpression], column: Int)
    /// `instance('households')/root/item[name = ${household}]/members`: a property of the entity of a list whose
    /// id (`name`) is the key.
    case entityLookup(list: String, key: XPathExpression, property: String, column: Int)
}

/// XPath's binary operators, loosest first.
enum XPathOperator: String, Sendable, Hashable {
    case or, and
    case equal = "=", notEqual = "!="
    case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case add = "+", subtract = "-"
    case multiply = "*", divide = "div", modulo = "mod"

    /// Binding strength in XPath 1.0 (higher binds tighter).
    var precedence: Int {
        switch self {
        case .or: return 1
        case .and: return 2
        case .equal, .notEqual: return 3
        case .less, .lessOrEqual, .greater, .greaterOrEqual: return 4
        case .add, .subtract: return 5
        case .multiply, .divide, .modulo: return 6
        }
    }
}

/// Why an XPath expression cannot be read or translated, with the 1-based column in the cell's text.
struct XPathError: Error, Sendable, Hashable {
    var message: String
    var column: Int
    var fix: String
}

/// One thing wrong with a form definition: which rule, where, what is wrong and how to fix it.
public struct Finding: Sendable, Hashable, CustomStringConvertible {
    /// How serious a finding is.
    public enum Severity: String, Sendable, Hashable, Comparable {
        /// Worth fixing; the form still loads.
        case warning
        /// The form does not load, or is not fit to publish.
        case error

        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs == .warning && rhs == .error }
    }

    /// Whether it is an error or a warning.
    public var severity: Severity
    /// Stable rule id (`json-syntax`, `schema`, `duplicate-field-id`, `popover-stacked`, …).
    public var rule: String
    /// The file the form came from, as given.
    public var file: String
    /// Where in the document, as a JSON path.
    public var path: JSONPath
    /// Line and column in the file, when known.
    public var location: SourceLocation?
    /// What is wrong.
    public var message: String
    /// How to fix it.
    public var fix: String

    /// A finding of `rule` at `path` in `file`.
    public init(
        _ severity: Severity, rule: String, file: String, path: JSONPath, location: SourceLocation? = nil,
        message: String, fix: String
    ) {
        self.severity = severity
        self.rule = rule
        self.file = file
        self.path = path
        self.location = location
        self.message = message
        self.fix = fix
    }

    /// `file:line:column: error[rule] $.path: message` followed by an indented `fix:` line.
    public var description: String {
        let place = location.map { "\(file):\($0.line):\($0.column)" } ?? file
        return "\(place): \(severity.rawValue)[\(rule)] \(path): \(message)\n    fix: \(fix)"
    }
}

/// What a list of findings, such as a load's or a lint's, says as a whole.
extension Array where Element == Finding {
    /// Whether any finding is an error.
    public var hasErrors: Bool { contains { $0.severity == .error } }
}

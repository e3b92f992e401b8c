/// One reason an answer cannot be accepted, in words a field worker understands.
public struct FieldIssue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A stable code for programs (`required`, `outOfRange`, …).
    public enum Code: String, Sendable, Hashable, Codable {
        case required
        case wrongType
        case notANumber
        case notAWholeNumber
        case outOfRange
        case tooShort
        case tooLong
        case patternMismatch
        /// The value could not be checked against the field's pattern within the work allowed for one value.
        case patternTooExpensive
        case notAChoice
        case invalidDate
        case invalidTime
        case invalidDateTime
        case invalidLocation
        case notYesOrNo
        case unknownField
        case readOnly
        /// The answer breaks the field's `constraint`.
        case constraint
        /// The field's `constraint` could not be evaluated within the work allowed.
        case constraintNotChecked
        /// A repeat has fewer instances than `minCount` (or its `countFrom` field asks for).
        case tooFewInstances
        /// A repeat has more instances than `maxCount` (or its `countFrom` field asks for).
        case tooManyInstances
    }

    public var fieldID: String
    public var code: Code
    /// What to do, addressed to the person filling the form ("Enter a number between 1 and 5.").
    public var message: String

    public init(fieldID: String, code: Code, message: String) {
        self.fieldID = fieldID
        self.code = code
        self.message = message
    }

    public var description: String { "\(fieldID): \(message)" }
}

/// The outcome of validating a whole form: every issue, keyed by field, in the form's order.
public struct ValidationReport: Sendable, Hashable, Codable {
    /// Issues in the order the fields appear in the form.
    public var issues: [FieldIssue]

    public init(issues: [FieldIssue] = []) {
        self.issues = issues
    }

    /// Whether nothing stands in the way of completion.
    public var isValid: Bool { issues.isEmpty }

    /// The issues of one field.
    public func issues(for fieldID: String) -> [FieldIssue] {
        issues.filter { $0.fieldID == fieldID }
    }

    /// The first field with an issue, where focus goes when completion fails.
    public var firstInvalidField: String? { issues.first?.fieldID }

    /// Issues grouped by field id.
    public var byField: [String: [FieldIssue]] { Dictionary(grouping: issues, by: \.fieldID) }
}

/// One reason an answer cannot be accepted, in words a field worker understands.
public struct FieldIssue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A stable code for programs (`required`, `outOfRange`, …).
    public enum Code: String, Sendable, Hashable, Codable {
        /// A required field has no answer: nothing, blank text or no option chosen.
        case required
        /// The answer's type does not fit the field's kind (a date stored for a number field).
        case wrongType
        /// What was typed in a `decimal` field is not a number.
        case notANumber
        /// What was typed in an `integer` field is not a whole number.
        case notAWholeNumber
        /// The number is below the field's `min` or above its `max`.
        case outOfRange
        /// The text has fewer characters than the field's `minLength`.
        case tooShort
        /// The text has more characters than the field's `maxLength`.
        case tooLong
        /// The text does not match the field's `pattern`; the message is the field's `patternMessage` when it has
        /// one.
        case patternMismatch
        /// The value could not be checked against the field's pattern within the work allowed for one value.
        case patternTooExpensive
        /// A value is not among the field's choices, or not among those its `choiceFilter` offers for the other
        /// answers.
        case notAChoice
        /// Not a real calendar date written `YYYY-MM-DD`.
        case invalidDate
        /// Not a time written `HH:MM` (24-hour).
        case invalidTime
        /// Not a date and time written `YYYY-MM-DD HH:MM`.
        case invalidDateTime
        /// Not a latitude (−90…90) and longitude (−180…180), with an accuracy that is not negative.
        case invalidLocation
        /// Not a line (`trace`) or area (`shape`) of points as `Geometry` reads them; the message says which point
        /// and why.
        case invalidGeometry
        /// What was typed in a `boolean` field is not yes or no.
        case notYesOrNo
        /// The form has no field with this key that takes an answer.
        case unknownField
        /// The field takes no answer: a note, a repeat, or a field computed from other answers.
        case readOnly
        /// The answer breaks the field's `constraint`.
        case constraint
        /// The field's `constraint` could not be evaluated within the work allowed.
        case constraintNotChecked
        /// The attached file is larger than the field's `maxBytes`.
        case fileTooLarge
        /// The attached file's media type is not among those the field accepts.
        case fileTypeNotAccepted
        /// The attachment reference is not well formed (its hash, size, type or name).
        case invalidAttachment
        /// A repeat has fewer instances than `minCount` (or its `countFrom` field asks for).
        case tooFewInstances
        /// A repeat has more instances than `maxCount` (or its `countFrom` field asks for).
        case tooManyInstances
    }

    /// The key of the field: its id, or inside a repeat instance its record key (`defects/<id>/severity`).
    public var fieldID: String
    /// Which rule the answer breaks.
    public var code: Code
    /// What to do, addressed to the person filling the form ("Enter a number between 1 and 5.").
    public var message: String

    /// An issue of the field at `fieldID`, with the message a person reads.
    public init(fieldID: String, code: Code, message: String) {
        self.fieldID = fieldID
        self.code = code
        self.message = message
    }

    /// `fieldID: message`.
    public var description: String { "\(fieldID): \(message)" }
}

/// The outcome of validating a whole form: every issue, keyed by field, in the form's order.
public struct ValidationReport: Sendable, Hashable, Codable {
    /// Issues in the order the fields appear in the form.
    public var issues: [FieldIssue]

    /// A report of these issues; valid when there are none.
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

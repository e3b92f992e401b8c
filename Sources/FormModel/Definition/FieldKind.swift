/// The kinds of field a form can hold.
public enum FieldKind: String, Codable, Sendable, CaseIterable {
    case text
    case multilineText
    case integer
    case decimal
    case boolean
    case date
    case time
    case dateTime
    case singleChoice
    case multipleChoice
    case location
    /// Read-only text shown to the person filling the form; holds no answer.
    case note

    /// Whether the field takes an answer (every kind but `note`).
    public var takesAnswer: Bool { self != .note }

    /// Whether `choices` apply to this kind.
    public var hasChoices: Bool { self == .singleChoice || self == .multipleChoice }

    /// Whether `min`/`max` apply to this kind.
    public var hasNumericRange: Bool { self == .integer || self == .decimal }

    /// Whether `minLength`/`maxLength`/`pattern` apply to this kind.
    public var hasTextConstraints: Bool { self == .text || self == .multilineText }
}

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
    /// A value computed from other answers by its `calculation`; not shown, never typed.
    case calculate
    /// A group of `fields` filled once per instance ("a defect"), as many instances as the person adds.
    case `repeat`

    /// Whether a person types an answer for the field (every kind but `note`, `calculate` and `repeat`; a field
    /// with a `calculation` is read-only too, see `FieldDefinition.isComputed`).
    public var takesAnswer: Bool { self != .note && self != .calculate && self != .repeat }

    /// Whether `choices` apply to this kind.
    public var hasChoices: Bool { self == .singleChoice || self == .multipleChoice }

    /// Whether `min`/`max` apply to this kind.
    public var hasNumericRange: Bool { self == .integer || self == .decimal }

    /// Whether `minLength`/`maxLength`/`pattern` apply to this kind.
    public var hasTextConstraints: Bool { self == .text || self == .multilineText }
}

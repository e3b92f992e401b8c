/// The kinds of field a form can hold.
public enum FieldKind: String, Codable, Sendable, CaseIterable {
    /// One line of text.
    case text
    /// Text of several lines, such as notes or a description.
    case multilineText
    /// A whole number; `min` and `max` bound it.
    case integer
    /// A number with a fractional part, kept exactly as a `Decimal`; `min` and `max` bound it.
    case decimal
    /// Yes or no.
    case boolean
    /// A calendar date, `YYYY-MM-DD`, with no time zone.
    case date
    /// A time of day, `HH:MM` (24-hour), with no time zone.
    case time
    /// A date and time of day, `YYYY-MM-DDTHH:MM`, local to where it was recorded.
    case dateTime
    /// One of the field's `choices`, stored by its value.
    case singleChoice
    /// Any number of the field's `choices`, stored as the list of their values.
    case multipleChoice
    /// Every one of the field's `choices`, put in order by the person filling the form (first = most preferred),
    /// stored as the list of their values in that order.
    case rank
    /// A position on Earth: latitude and longitude in degrees, and optionally the accuracy in metres.
    case location
    /// A line on Earth: two or more points, stored as text the way ODK writes a geotrace
    /// (`lat lon alt acc;lat lon alt acc`); see `Geometry`.
    case trace
    /// An area on Earth: a closed line of three or more distinct points, its last point the first, stored as
    /// text the way ODK writes a geoshape; see `Geometry`.
    case shape
    /// A photo: an image file attached to the record (`accept` defaults to `image/*`).
    case photo
    /// An audio recording attached to the record (`accept` defaults to `audio/*`).
    case audio
    /// Any file attached to the record: a document, a signature (`accept` defaults to anything).
    case file
    /// Read-only text shown to the person filling the form; holds no answer.
    case note
    /// A value computed from other answers by its `calculation`; not shown, never typed.
    case calculate
    /// A group of `fields` filled once per instance ("a defect"), as many instances as the person adds.
    case `repeat`

    /// Whether a person types an answer for the field (every kind but `note`, `calculate` and `repeat`; a field
    /// with a `calculation` is read-only too, see `FieldDefinition.isComputed`).
    public var takesAnswer: Bool { self != .note && self != .calculate && self != .repeat }

    /// Whether the answer is a file attached to the record (`photo`, `audio`, `file`); `maxBytes` and `accept`
    /// apply.
    public var takesAttachment: Bool { self == .photo || self == .audio || self == .file }

    /// The media types a field of this kind accepts when it names none.
    public var defaultAccept: [String] {
        switch self {
        case .photo: return ["image/*"]
        case .audio: return ["audio/*"]
        default: return ["*/*"]
        }
    }

    /// Whether `choices` apply to this kind.
    public var hasChoices: Bool { self == .singleChoice || self == .multipleChoice || self == .rank }

    /// Whether the answer is a list of points (`trace`, `shape`), stored as text in ODK's form.
    public var isGeometry: Bool { self == .trace || self == .shape }

    /// Whether `min`/`max` apply to this kind.
    public var hasNumericRange: Bool { self == .integer || self == .decimal }

    /// Whether `minLength`/`maxLength`/`pattern` apply to this kind.
    public var hasTextConstraints: Bool { self == .text || self == .multilineText }
}

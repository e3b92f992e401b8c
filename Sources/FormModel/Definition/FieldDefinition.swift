import Foundation

/// One option of a single- or multiple-choice field.
public struct Choice: Codable, Sendable, Hashable {
    /// The value stored in the record.
    public var value: String
    /// What the person filling the form reads.
    public var label: String

    public init(value: String, label: String) {
        self.value = value
        self.label = label
    }
}

/// One field of a form: its kind, label, constraints and the condition under which it is shown.
public struct FieldDefinition: Codable, Sendable, Hashable, Identifiable {
    /// Unique within the form; used as the key of the answer and in `relevant` expressions.
    public var id: String
    public var kind: FieldKind
    public var label: String
    /// Guidance shown under the field.
    public var hint: String?
    public var required: Bool
    /// The answer a new record starts with (not counted as something the person typed).
    public var defaultValue: AnswerValue?
    public var min: Double?
    public var max: Double?
    public var minLength: Int?
    public var maxLength: Int?
    /// A regular expression the whole text must match.
    public var pattern: String?
    /// What to tell the person when `pattern` does not match ("Use the form ABC-123").
    public var patternMessage: String?
    public var choices: [Choice]?
    /// When to show the field, in the relevance language (`priority == 'high'`); always shown when nil.
    public var relevant: String?
    /// Overrides the form's conflict policy for this field.
    public var conflictPolicy: ConflictPolicy?

    public init(
        id: String, kind: FieldKind, label: String, hint: String? = nil, required: Bool = false,
        defaultValue: AnswerValue? = nil, min: Double? = nil, max: Double? = nil,
        minLength: Int? = nil, maxLength: Int? = nil, pattern: String? = nil, patternMessage: String? = nil,
        choices: [Choice]? = nil, relevant: String? = nil, conflictPolicy: ConflictPolicy? = nil
    ) {
        self.id = id
        self.kind = kind
        self.label = label
        self.hint = hint
        self.required = required
        self.defaultValue = defaultValue
        self.min = min
        self.max = max
        self.minLength = minLength
        self.maxLength = maxLength
        self.pattern = pattern
        self.patternMessage = patternMessage
        self.choices = choices
        self.relevant = relevant
        self.conflictPolicy = conflictPolicy
    }

    enum CodingKeys: String, CodingKey {
        case id, kind, label, hint, required
        case defaultValue = "default"
        case min, max, minLength, maxLength, pattern, patternMessage, choices, relevant, conflictPolicy
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        kind = try container.decode(FieldKind.self, forKey: .kind)
        label = try container.decode(String.self, forKey: .label)
        hint = try container.decodeIfPresent(String.self, forKey: .hint)
        required = try container.decodeIfPresent(Bool.self, forKey: .required) ?? false
        min = try container.decodeIfPresent(Double.self, forKey: .min)
        max = try container.decodeIfPresent(Double.self, forKey: .max)
        minLength = try container.decodeIfPresent(Int.self, forKey: .minLength)
        maxLength = try container.decodeIfPresent(Int.self, forKey: .maxLength)
        pattern = try container.decodeIfPresent(String.self, forKey: .pattern)
        patternMessage = try container.decodeIfPresent(String.self, forKey: .patternMessage)
        choices = try container.decodeIfPresent([Choice].self, forKey: .choices)
        relevant = try container.decodeIfPresent(String.self, forKey: .relevant)
        conflictPolicy = try container.decodeIfPresent(ConflictPolicy.self, forKey: .conflictPolicy)
        // A default is written in the plain JSON form of the field's kind ("high", 3, true).
        if container.contains(.defaultValue) {
            let plain = try container.decode(PlainJSON.self, forKey: .defaultValue)
            defaultValue = AnswerValue(plain: plain, kind: kind)
        } else {
            defaultValue = nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encode(label, forKey: .label)
        try container.encodeIfPresent(hint, forKey: .hint)
        if required { try container.encode(true, forKey: .required) }
        try container.encodeIfPresent(defaultValue?.plain, forKey: .defaultValue)
        try container.encodeIfPresent(min, forKey: .min)
        try container.encodeIfPresent(max, forKey: .max)
        try container.encodeIfPresent(minLength, forKey: .minLength)
        try container.encodeIfPresent(maxLength, forKey: .maxLength)
        try container.encodeIfPresent(pattern, forKey: .pattern)
        try container.encodeIfPresent(patternMessage, forKey: .patternMessage)
        try container.encodeIfPresent(choices, forKey: .choices)
        try container.encodeIfPresent(relevant, forKey: .relevant)
        try container.encodeIfPresent(conflictPolicy, forKey: .conflictPolicy)
    }

    /// The label of the choice with `value`, or the value itself.
    public func label(ofChoice value: String) -> String {
        choices?.first { $0.value == value }?.label ?? value
    }
}

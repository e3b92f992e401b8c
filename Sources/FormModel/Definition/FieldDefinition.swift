import Foundation

/// One option of a single- or multiple-choice field.
public struct Choice: Codable, Sendable, Hashable {
    /// The value stored in the record.
    public var value: String
    /// What the person filling the form reads, in each language of the form.
    public var label: LocalizedText
    /// Further properties a `choiceFilter` reads as `choice.<name>` (`{"severity": "high"}`).
    public var properties: [String: String]?

    /// A choice stored as `value` and shown as `label`, with the properties a `choiceFilter` may read.
    public init(value: String, label: LocalizedText, properties: [String: String]? = nil) {
        self.value = value
        self.label = label
        self.properties = properties
    }
}

/// One field of a form: its kind, label, constraints and the condition under which it is shown.
public struct FieldDefinition: Codable, Sendable, Hashable, Identifiable {
    /// Unique within the form; used as the key of the answer and in `relevant` expressions.
    public var id: String
    /// What kind of answer the field takes, and so how it is typed, stored and checked.
    public var kind: FieldKind
    /// The question the person filling the form reads ("Site name").
    public var label: LocalizedText
    /// Guidance shown under the field.
    public var hint: LocalizedText?
    /// Whether completion needs an answer while the field is relevant; a draft may leave it empty.
    public var required: Bool
    /// What to tell the person when a required field has no answer (XLSForm's `required_message`); "Required:
    /// enter a value." when nil.
    public var requiredMessage: LocalizedText?
    /// A condition under which completion needs an answer (`required` is then false), written
    /// `"required": {"expression": "age >= 18"}`: XLSForm's `required` written as an expression.
    public var requiredExpression: String?
    /// The answer a new record starts with (not counted as something the person typed).
    public var defaultValue: AnswerValue?
    /// For `integer` and `decimal`: the smallest value accepted; no lower bound when nil.
    public var min: Double?
    /// For `integer` and `decimal`: the largest value accepted; no upper bound when nil.
    public var max: Double?
    /// For `text` and `multilineText`: the fewest characters accepted; no lower bound when nil.
    public var minLength: Int?
    /// For `text` and `multilineText`: the most characters accepted; no upper bound when nil.
    public var maxLength: Int?
    /// A regular expression the whole text must match.
    public var pattern: String?
    /// What to tell the person when `pattern` does not match ("Use the form ABC-123").
    public var patternMessage: LocalizedText?
    /// For `singleChoice`, `multipleChoice` and `rank`: the options offered, in the order shown.
    public var choices: [Choice]?
    /// For `singleChoice` and `multipleChoice` without `choices`: where the choices come from (an entity list).
    public var choicesFrom: ChoiceSource?
    /// The property of the form's entity (`FormDefinition.entity`) this field's answer is saved to.
    public var saveTo: String?
    /// When to show the field, in the relevance language (`priority == 'high'`); always shown when nil.
    public var relevant: String?
    /// Overrides the form's conflict policy for this field.
    public var conflictPolicy: ConflictPolicy?
    /// The expression whose value the field holds (`kind: calculate`, or a read-only computed field shown to the person).
    public var calculation: String?
    /// An expression that must be true for the answer (`.` is the answer), checked like the built-in rules:
    /// a draft may hold a value that breaks it, completion may not.
    public var constraint: String?
    /// What to tell the person when `constraint` is false.
    public var constraintMessage: LocalizedText?
    /// The default as an expression (`today()`), written `"default": {"expression": "today()"}`.
    public var defaultExpression: String?
    /// Which choices are offered: an expression over other answers and `choice.<property>` of each choice.
    public var choiceFilter: String?
    /// For `repeat`: the fields of one instance (a repeat may hold repeats).
    public var fields: [FieldDefinition]?
    /// For `repeat`: at least this many instances to complete.
    public var minCount: Int?
    /// For `repeat`: at most this many instances.
    public var maxCount: Int?
    /// For `repeat`: the id of an integer or calculate field whose value is the number of instances.
    public var countFrom: String?
    /// For `repeat`: what one instance is called ("Defect"): "Defect 2", "Add another defect?".
    public var instanceLabel: LocalizedText?
    /// For `photo`, `audio` and `file`: the largest file accepted, in bytes; no limit of the form's own when nil.
    public var maxBytes: Int64?
    /// For `photo`, `audio` and `file`: the media types accepted (`image/jpeg`, `image/*`); the kind's
    /// `defaultAccept` when nil.
    public var accept: [String]?
    /// Whether the answer is sealed to the project's public key on the device before it leaves it, so the
    /// server stores, merges and exports it without being able to read it (docs/sensitive-fields.md).
    public var sensitive: Bool

    /// A field with its id, kind and label; every option not given is unset, so the field is optional and
    /// unconstrained.
    public init(
        id: String, kind: FieldKind, label: LocalizedText, hint: LocalizedText? = nil, required: Bool = false,
        defaultValue: AnswerValue? = nil, min: Double? = nil, max: Double? = nil,
        minLength: Int? = nil, maxLength: Int? = nil, pattern: String? = nil, patternMessage: LocalizedText? = nil,
        choices: [Choice]? = nil, relevant: String? = nil, conflictPolicy: ConflictPolicy? = nil,
        calculation: String? = nil, constraint: String? = nil, constraintMessage: LocalizedText? = nil,
        defaultExpression: String? = nil, choiceFilter: String? = nil, fields: [FieldDefinition]? = nil,
        minCount: Int? = nil, maxCount: Int? = nil, countFrom: String? = nil, instanceLabel: LocalizedText? = nil,
        maxBytes: Int64? = nil, accept: [String]? = nil, requiredExpression: String? = nil, requiredMessage: LocalizedText? = nil,
        choicesFrom: ChoiceSource? = nil, saveTo: String? = nil, sensitive: Bool = false
    ) {
        self.sensitive = sensitive
        self.choicesFrom = choicesFrom
        self.saveTo = saveTo
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
        self.calculation = calculation
        self.constraint = constraint
        self.constraintMessage = constraintMessage
        self.defaultExpression = defaultExpression
        self.choiceFilter = choiceFilter
        self.fields = fields
        self.minCount = minCount
        self.maxCount = maxCount
        self.countFrom = countFrom
        self.instanceLabel = instanceLabel
        self.maxBytes = maxBytes
        self.accept = accept
        self.requiredExpression = requiredExpression
        self.requiredMessage = requiredMessage
    }

    enum CodingKeys: String, CodingKey {
        case id, kind, label, hint, required, requiredMessage
        case defaultValue = "default"
        case min, max, minLength, maxLength, pattern, patternMessage, choices, relevant, conflictPolicy
        case calculation, constraint, constraintMessage, choiceFilter, fields, minCount, maxCount, countFrom, instanceLabel
        case maxBytes, accept, choicesFrom, saveTo, sensitive
    }

    /// `"default": {"expression": "today()"}`.
    /// A default or a required condition written as an expression: `{"expression": "today()"}`.
    private struct ExpressionObject: Codable {
        var expression: String
    }

    /// Whether the field's value is computed (`calculate`, or a `calculation` on a field shown read-only).
    public var isComputed: Bool { kind == .calculate || calculation != nil }

    /// Whether a person types the field's answer: it takes one and is not computed.
    public var isEditable: Bool { kind.takesAnswer && calculation == nil }

    /// Whether the field holds a value in a record: typed or computed.
    public var holdsValue: Bool { kind.takesAnswer || kind == .calculate }

    /// The media types the field accepts: `accept`, or its kind's default.
    public var acceptedTypes: [String] { accept ?? kind.defaultAccept }

    /// Whether the field accepts a file of media type `type`.
    public func accepts(mediaType type: String) -> Bool {
        acceptedTypes.contains { MediaType.matches(type, pattern: $0) }
    }

    /// What one instance of a repeat is called: `instanceLabel`, or the label.
    public var instanceNoun: LocalizedText { instanceLabel ?? label }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        kind = try container.decode(FieldKind.self, forKey: .kind)
        label = try container.decode(LocalizedText.self, forKey: .label)
        hint = try container.decodeIfPresent(LocalizedText.self, forKey: .hint)
        // `required` is true or false, or {"expression": "age >= 18"}: required when the condition holds.
        required = false
        requiredExpression = nil
        if container.contains(.required) {
            let plain = try container.decode(PlainJSON.self, forKey: .required)
            if case .bool(let flag) = plain {
                required = flag
            } else if case .object(let members) = plain, members.count == 1, case .string(let source)? = members["expression"] {
                requiredExpression = source
            } else {
                throw DecodingError.dataCorruptedError(forKey: .required, in: container, debugDescription: "required is true, false or {\"expression\": \"…\"}")
            }
        }
        requiredMessage = try container.decodeIfPresent(LocalizedText.self, forKey: .requiredMessage)
        min = try container.decodeIfPresent(Double.self, forKey: .min)
        max = try container.decodeIfPresent(Double.self, forKey: .max)
        minLength = try container.decodeIfPresent(Int.self, forKey: .minLength)
        maxLength = try container.decodeIfPresent(Int.self, forKey: .maxLength)
        pattern = try container.decodeIfPresent(String.self, forKey: .pattern)
        patternMessage = try container.decodeIfPresent(LocalizedText.self, forKey: .patternMessage)
        choices = try container.decodeIfPresent([Choice].self, forKey: .choices)
        relevant = try container.decodeIfPresent(String.self, forKey: .relevant)
        conflictPolicy = try container.decodeIfPresent(ConflictPolicy.self, forKey: .conflictPolicy)
        calculation = try container.decodeIfPresent(String.self, forKey: .calculation)
        constraint = try container.decodeIfPresent(String.self, forKey: .constraint)
        constraintMessage = try container.decodeIfPresent(LocalizedText.self, forKey: .constraintMessage)
        choiceFilter = try container.decodeIfPresent(String.self, forKey: .choiceFilter)
        fields = try container.decodeIfPresent([FieldDefinition].self, forKey: .fields)
        minCount = try container.decodeIfPresent(Int.self, forKey: .minCount)
        maxCount = try container.decodeIfPresent(Int.self, forKey: .maxCount)
        countFrom = try container.decodeIfPresent(String.self, forKey: .countFrom)
        instanceLabel = try container.decodeIfPresent(LocalizedText.self, forKey: .instanceLabel)
        maxBytes = try container.decodeIfPresent(Int64.self, forKey: .maxBytes)
        accept = try container.decodeIfPresent([String].self, forKey: .accept)
        choicesFrom = try container.decodeIfPresent(ChoiceSource.self, forKey: .choicesFrom)
        saveTo = try container.decodeIfPresent(String.self, forKey: .saveTo)
        sensitive = try container.decodeIfPresent(Bool.self, forKey: .sensitive) ?? false
        // A default is written in the plain JSON form of the field's kind ("high", 3, true), or as
        // {"expression": "today()"}.
        defaultValue = nil
        defaultExpression = nil
        if container.contains(.defaultValue) {
            let plain = try container.decode(PlainJSON.self, forKey: .defaultValue)
            if case .object(let members) = plain, members.count == 1, case .string(let source)? = members["expression"] {
                defaultExpression = source
            } else {
                defaultValue = AnswerValue(plain: plain, kind: kind)
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encode(label, forKey: .label)
        try container.encodeIfPresent(hint, forKey: .hint)
        if let requiredExpression {
            try container.encode(ExpressionObject(expression: requiredExpression), forKey: .required)
        } else if required {
            try container.encode(true, forKey: .required)
        }
        try container.encodeIfPresent(requiredMessage, forKey: .requiredMessage)
        if let defaultExpression {
            try container.encode(ExpressionObject(expression: defaultExpression), forKey: .defaultValue)
        } else {
            try container.encodeIfPresent(defaultValue?.plain, forKey: .defaultValue)
        }
        try container.encodeIfPresent(min, forKey: .min)
        try container.encodeIfPresent(max, forKey: .max)
        try container.encodeIfPresent(minLength, forKey: .minLength)
        try container.encodeIfPresent(maxLength, forKey: .maxLength)
        try container.encodeIfPresent(pattern, forKey: .pattern)
        try container.encodeIfPresent(patternMessage, forKey: .patternMessage)
        try container.encodeIfPresent(choices, forKey: .choices)
        try container.encodeIfPresent(choicesFrom, forKey: .choicesFrom)
        try container.encodeIfPresent(relevant, forKey: .relevant)
        try container.encodeIfPresent(conflictPolicy, forKey: .conflictPolicy)
        try container.encodeIfPresent(calculation, forKey: .calculation)
        try container.encodeIfPresent(constraint, forKey: .constraint)
        try container.encodeIfPresent(constraintMessage, forKey: .constraintMessage)
        try container.encodeIfPresent(choiceFilter, forKey: .choiceFilter)
        try container.encodeIfPresent(fields, forKey: .fields)
        try container.encodeIfPresent(minCount, forKey: .minCount)
        try container.encodeIfPresent(maxCount, forKey: .maxCount)
        try container.encodeIfPresent(countFrom, forKey: .countFrom)
        try container.encodeIfPresent(instanceLabel, forKey: .instanceLabel)
        try container.encodeIfPresent(maxBytes, forKey: .maxBytes)
        try container.encodeIfPresent(accept, forKey: .accept)
        try container.encodeIfPresent(saveTo, forKey: .saveTo)
        if sensitive { try container.encode(true, forKey: .sensitive) }
    }

    /// The label of the choice with `value` in `language` (nil: the default language), or the value itself.
    public func label(ofChoice value: String, in language: String? = nil) -> String {
        choices?.first { $0.value == value }?.label.text(in: language) ?? value
    }

    /// Calls `body` with each text of the field a person reads (label, hint, messages, instance name, the
    /// choices' labels) and of the fields it holds, so each may be changed.
    mutating func updateTexts(_ body: (inout LocalizedText) -> Void) {
        body(&label)
        for path in [\FieldDefinition.hint, \.requiredMessage, \.patternMessage, \.constraintMessage, \.instanceLabel] {
            if var text = self[keyPath: path] {
                body(&text)
                self[keyPath: path] = text
            }
        }
        if var list = choices {
            for index in list.indices { body(&list[index].label) }
            choices = list
        }
        if var children = fields {
            for index in children.indices { children[index].updateTexts(body) }
            fields = children
        }
    }
}

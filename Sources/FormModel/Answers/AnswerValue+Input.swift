import Foundation

extension AnswerValue {
    /// Reads what a person typed for `field`: a typed answer when the text fits the field's kind,
    /// otherwise `.raw` holding the text unchanged. Returns nil for empty input (no answer).
    ///
    /// Choices may be given by value, by label (any case) or by their 1-based number;
    /// multiple choices are separated by commas, and a rank lists every choice so, first the most preferred.
    /// A trace or shape is its points as ODK writes them (`Geometry`); a shape left open is closed.
    public static func parse(_ input: String, for field: FieldDefinition) -> AnswerValue? {
        let trimmed = input.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return nil }
        switch field.kind {
        case .text: return .text(input)
        case .multilineText: return .text(input)
        case .note, .calculate, .repeat: return .raw(input)
        // A file is attached (FormSession.attach), not typed: text typed here is kept as raw input.
        case .photo, .audio, .file: return .raw(input)
        case .integer:
            return Int(trimmed).map(AnswerValue.integer) ?? .raw(input)
        case .decimal:
            guard trimmed.range(of: #"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"#, options: .regularExpression) != nil,
                let value = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX"))
            else { return .raw(input) }
            return .decimal(value)
        case .boolean:
            switch trimmed.lowercased() {
            case "yes", "y", "true", "1", "on": return .boolean(true)
            case "no", "n", "false", "0", "off": return .boolean(false)
            default: return .raw(input)
            }
        case .date:
            return LocalDateTime.isDate(trimmed) ? .date(trimmed) : .raw(input)
        case .time:
            return LocalDateTime.normalizedTime(trimmed).map(AnswerValue.time) ?? .raw(input)
        case .dateTime:
            return LocalDateTime.normalizedDateTime(trimmed).map(AnswerValue.dateTime) ?? .raw(input)
        case .singleChoice:
            return matchChoice(trimmed, in: field).map(AnswerValue.choice) ?? .raw(input)
        case .multipleChoice, .rank:
            let parts = trimmed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            var values: [String] = []
            for part in parts {
                guard let value = matchChoice(part, in: field) else { return .raw(input) }
                if values.contains(value) {
                    // A rank puts each choice in one place.
                    if field.kind == .rank { return .raw(input) }
                } else {
                    values.append(value)
                }
            }
            return .choices(values)
        case .trace, .shape:
            guard let geometry = try? Geometry(parsing: trimmed, for: field.kind, closing: true) else { return .raw(input) }
            return .text(geometry.text)
        case .location:
            let numbers = trimmed.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard (2...3).contains(numbers.count), numbers.allSatisfy({ $0 != nil }) else { return .raw(input) }
            let location = Location(latitude: numbers[0]!, longitude: numbers[1]!, accuracy: numbers.count == 3 ? numbers[2] : nil)
            return location.isOnEarth ? .location(location) : .raw(input)
        }
    }

    private static func matchChoice(_ text: String, in field: FieldDefinition) -> String? {
        // Choices from an entity list are typed as the entity's id (the device holds no lists yet).
        if field.choicesFrom != nil { return text }
        let choices = field.choices ?? []
        if let exact = choices.first(where: { $0.value == text }) { return exact.value }
        // A choice's label in any language of the form.
        if let labelled = choices.first(where: { $0.label.allTexts.contains { $0.caseInsensitiveCompare(text) == .orderedSame } }) { return labelled.value }
        if let number = Int(text), choices.indices.contains(number - 1) { return choices[number - 1].value }
        return nil
    }

    /// Builds an answer from its plain JSON form for `kind` ("high", 3, true, {"latitude": …});
    /// nil when the JSON does not fit the kind.
    public init?(plain: PlainJSON, kind: FieldKind) {
        switch (kind, plain) {
        case (.text, .string(let text)), (.multilineText, .string(let text)): self = .text(text)
        case (.trace, .string(let text)), (.shape, .string(let text)):
            guard (try? Geometry(parsing: text, for: kind)) != nil else { return nil }
            self = .text(text)
        case (.integer, .number(let number)) where number.rounded() == number && abs(number) < 9e15: self = .integer(Int(number))
        case (.decimal, .number(let number)): self = .decimal(Decimal(number))
        case (.boolean, .bool(let flag)): self = .boolean(flag)
        case (.date, .string(let text)) where LocalDateTime.isDate(text): self = .date(text)
        case (.time, .string(let text)):
            guard let time = LocalDateTime.normalizedTime(text) else { return nil }
            self = .time(time)
        case (.dateTime, .string(let text)):
            guard let value = LocalDateTime.normalizedDateTime(text) else { return nil }
            self = .dateTime(value)
        case (.singleChoice, .string(let value)): self = .choice(value)
        case (.multipleChoice, .array(let items)), (.rank, .array(let items)):
            var values: [String] = []
            for item in items {
                guard case .string(let value) = item else { return nil }
                values.append(value)
            }
            self = .choices(values)
        case (.location, .object(let members)):
            guard case .number(let latitude)? = members["latitude"], case .number(let longitude)? = members["longitude"] else { return nil }
            var accuracy: Double?
            if case .number(let value)? = members["accuracy"] { accuracy = value }
            self = .location(Location(latitude: latitude, longitude: longitude, accuracy: accuracy))
        case (.photo, .object(let members)), (.audio, .object(let members)), (.file, .object(let members)):
            guard case .string(let sha256)? = members["sha256"], case .number(let bytes)? = members["bytes"],
                bytes.rounded() == bytes, bytes >= 0, bytes < 9e15,
                case .string(let type)? = members["type"], case .string(let name)? = members["name"]
            else { return nil }
            let reference = AttachmentReference(sha256: sha256, bytes: Int64(bytes), type: type, name: name)
            guard reference.problem == nil else { return nil }
            self = .attachment(reference)
        default:
            return nil
        }
    }

    /// The plain JSON form of this answer, as defaults and exports write it.
    public var plain: PlainJSON {
        switch self {
        case .text(let text), .date(let text), .time(let text), .dateTime(let text), .choice(let text), .raw(let text):
            return .string(text)
        case .integer(let value): return .number(Double(value))
        case .decimal(let value): return .number(NSDecimalNumber(decimal: value).doubleValue)
        case .boolean(let value): return .bool(value)
        case .choices(let values): return .array(values.map(PlainJSON.string))
        case .location(let location):
            var members: [String: PlainJSON] = ["latitude": .number(location.latitude), "longitude": .number(location.longitude)]
            if let accuracy = location.accuracy { members["accuracy"] = .number(accuracy) }
            return .object(members)
        case .attachment(let reference):
            return .object([
                "sha256": .string(reference.sha256), "bytes": .number(Double(reference.bytes)),
                "type": .string(reference.type), "name": .string(reference.name),
            ])
        case .sealed(let sealed):
            return .object(["sealed": .object(["key": .string(sealed.key), "enc": .string(sealed.enc), "ct": .string(sealed.ct)])])
        }
    }
}

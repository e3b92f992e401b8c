import Foundation

/// Checks one answer against its field's kind and constraints.
public enum FieldValidator {
    /// Issues for `answer` (nil = unanswered) in `field`; empty when the answer is acceptable.
    ///
    /// A `pattern` is checked with bounded work (`PatternMatcher`); `verdicts` holds outcomes computed ahead
    /// (see `FormValidator.precheck`), so no regular expression runs again for those values.
    public static func issues(for field: FieldDefinition, answer: AnswerValue?, verdicts: PatternVerdicts? = nil) -> [FieldIssue] {
        func issue(_ code: FieldIssue.Code, _ message: String) -> [FieldIssue] {
            [FieldIssue(fieldID: field.id, code: code, message: message)]
        }
        guard field.kind.takesAnswer else {
            return answer == nil ? [] : issue(.readOnly, formatMessage(for: field))
        }
        guard let answer, !answer.isBlank else {
            guard field.required else { return [] }
            return issue(.required, field.kind.hasChoices ? "Required: choose an option." : "Required: enter a value.")
        }
        // A sealed answer was checked on the device that sealed it; here only its presence counts.
        if case .sealed = answer { return [] }
        if case .raw(let text) = answer {
            if field.kind.isGeometry {
                do throws(Geometry.Problem) {
                    _ = try Geometry(parsing: text, for: field.kind, closing: true)
                } catch {
                    return issue(.invalidGeometry, error.message)
                }
            }
            return issue(rawCode(field.kind), formatMessage(for: field))
        }
        guard answer.fits(field.kind) else {
            return issue(.wrongType, "This answer is a \(answer.tag), but the field expects \(expectation(field.kind)).")
        }
        switch answer {
        case .integer(let value):
            return rangeIssues(field, Double(value))
        case .decimal(let value):
            return rangeIssues(field, NSDecimalNumber(decimal: value).doubleValue)
        case .text(let text) where field.kind.isGeometry:
            do throws(Geometry.Problem) {
                _ = try Geometry(parsing: text, for: field.kind)
                return []
            } catch {
                return issue(.invalidGeometry, error.message)
            }
        case .text(let text):
            var found: [FieldIssue] = []
            let length = text.count
            if let minimum = field.minLength, length < minimum {
                found += issue(.tooShort, lengthMessage(field, tooShort: true))
            }
            if let maximum = field.maxLength, length > maximum {
                found += issue(.tooLong, lengthMessage(field, tooShort: false))
            }
            if let pattern = field.pattern {
                switch verdicts?.outcome(pattern: pattern, text: text) ?? PatternMatcher.check(text, pattern: pattern) {
                case .match: break
                case .mismatch, .invalidPattern:
                    found += issue(.patternMismatch, field.patternMessage?.text ?? "Use the expected format (\(pattern)).")
                case .tooExpensive:
                    found += issue(.patternTooExpensive, PatternMatcher.tooExpensiveMessage)
                }
            }
            return found
        case .date(let text):
            return LocalDateTime.isDate(text) ? [] : issue(.invalidDate, formatMessage(for: field))
        case .time(let text):
            return LocalDateTime.normalizedTime(text) == text ? [] : issue(.invalidTime, formatMessage(for: field))
        case .dateTime(let text):
            return LocalDateTime.normalizedDateTime(text) == text ? [] : issue(.invalidDateTime, formatMessage(for: field))
        case .choice(let value):
            return isChoice(value, of: field) ? [] : issue(.notAChoice, choiceMessage(field))
        case .choices(let values):
            guard values.allSatisfy({ isChoice($0, of: field) }) else { return issue(.notAChoice, choiceMessage(field)) }
            return field.kind == .rank && Set(values).count != values.count ? issue(.notAChoice, choiceMessage(field)) : []
        case .location(let location):
            return location.isOnEarth ? [] : issue(.invalidLocation, formatMessage(for: field))
        case .attachment(let reference):
            return attachmentIssues(field, reference)
        case .boolean, .raw, .sealed:
            return []
        }
    }

    /// What to type for a field of this kind, as a sentence.
    public static func formatMessage(for field: FieldDefinition) -> String {
        switch field.kind {
        case .integer: return rangeSentence(field, noun: "a whole number") ?? "Enter a whole number, like 3."
        case .decimal: return rangeSentence(field, noun: "a number") ?? "Enter a number, like 2.5."
        case .boolean: return "Answer yes or no."
        case .date: return "Enter a date as YYYY-MM-DD, like 2026-11-22."
        case .time: return "Enter a time as HH:MM, like 14:30."
        case .dateTime: return "Enter a date and time as YYYY-MM-DD HH:MM, like 2026-11-22 14:30."
        case .singleChoice, .multipleChoice, .rank: return choiceMessage(field)
        case .trace: return "Enter a line of at least 2 points: \(Geometry.pointFormat)."
        case .shape: return "Enter an area of at least 3 points: \(Geometry.pointFormat)."
        case .location: return "Enter a location as latitude, longitude and optionally accuracy in metres, like 52.52, 13.40, 5."
        case .photo, .audio, .file: return attachSentence(field)
        case .text, .multilineText: return "Enter text."
        case .note: return "This is a note; it takes no answer."
        case .calculate: return "This value is computed from other answers; it takes no answer."
        case .repeat: return "This is a group of repeated fields; answer the fields of its instances."
        }
    }

    static func rawCode(_ kind: FieldKind) -> FieldIssue.Code {
        switch kind {
        case .integer: return .notAWholeNumber
        case .decimal: return .notANumber
        case .boolean: return .notYesOrNo
        case .date: return .invalidDate
        case .time: return .invalidTime
        case .dateTime: return .invalidDateTime
        case .singleChoice, .multipleChoice, .rank: return .notAChoice
        case .location: return .invalidLocation
        case .trace, .shape: return .invalidGeometry
        case .text, .multilineText, .note, .photo, .audio, .file: return .wrongType
        case .calculate, .repeat: return .readOnly
        }
    }

    static func expectation(_ kind: FieldKind) -> String {
        switch kind {
        case .text, .multilineText: return "text"
        case .integer: return "a whole number"
        case .decimal: return "a number"
        case .boolean: return "yes or no"
        case .date: return "a date"
        case .time: return "a time"
        case .dateTime: return "a date and time"
        case .singleChoice: return "one choice"
        case .multipleChoice: return "a list of choices"
        case .rank: return "every choice, in order"
        case .location: return "a location"
        case .trace: return "a line of points"
        case .shape: return "an area of points"
        case .photo: return "a photo"
        case .audio: return "an audio recording"
        case .file: return "a file"
        case .note, .calculate, .repeat: return "no answer"
        }
    }

    static func attachmentIssues(_ field: FieldDefinition, _ reference: AttachmentReference) -> [FieldIssue] {
        if let problem = reference.problem {
            return [FieldIssue(fieldID: field.id, code: .invalidAttachment, message: problem)]
        }
        var found: [FieldIssue] = []
        if let limit = field.maxBytes, reference.bytes > limit {
            found.append(FieldIssue(
                fieldID: field.id, code: .fileTooLarge,
                message: "\(reference.name) is \(AttachmentReference.formatSize(reference.bytes)); attach a file of at most \(AttachmentReference.formatSize(limit))."))
        }
        if !field.accepts(mediaType: reference.type) {
            found.append(FieldIssue(
                fieldID: field.id, code: .fileTypeNotAccepted,
                message: "\(reference.name) is \(reference.type); attach \(acceptedSentence(field))."))
        }
        return found
    }

    /// "Attach a photo (image/*) of at most 10 MB."
    static func attachSentence(_ field: FieldDefinition) -> String {
        let limit = field.maxBytes.map { " of at most \(AttachmentReference.formatSize($0))" } ?? ""
        return "Attach \(acceptedSentence(field))\(limit)."
    }

    static func acceptedSentence(_ field: FieldDefinition) -> String {
        let types = field.acceptedTypes
        if types == ["*/*"] { return "any file" }
        return "\(expectation(field.kind)) of type \(types.joined(separator: ", "))"
    }

    static func rangeIssues(_ field: FieldDefinition, _ value: Double) -> [FieldIssue] {
        let belowMinimum = field.min.map { value < $0 } ?? false
        let aboveMaximum = field.max.map { value > $0 } ?? false
        guard belowMinimum || aboveMaximum else { return [] }
        let noun = field.kind == .integer ? "a whole number" : "a number"
        return [FieldIssue(fieldID: field.id, code: .outOfRange, message: rangeSentence(field, noun: noun) ?? "Enter \(noun).")]
    }

    static func rangeSentence(_ field: FieldDefinition, noun: String) -> String? {
        let format = AnswerValue.format
        switch (field.min, field.max) {
        case (let low?, let high?): return "Enter \(noun) between \(format(low)) and \(format(high))."
        case (let low?, nil): return "Enter \(noun) of at least \(format(low))."
        case (nil, let high?): return "Enter \(noun) of at most \(format(high))."
        case (nil, nil): return nil
        }
    }

    static func lengthMessage(_ field: FieldDefinition, tooShort: Bool) -> String {
        switch (field.minLength, field.maxLength) {
        case (let low?, let high?): return "Use between \(low) and \(high) characters."
        case (let low?, nil): return "Use at least \(low) characters."
        case (nil, let high?): return "Use at most \(high) characters."
        case (nil, nil): return tooShort ? "Too short." : "Too long."
        }
    }

    static func isChoice(_ value: String, of field: FieldDefinition) -> Bool {
        // An entity's id: the device holds no entity lists yet to check it against.
        if field.choicesFrom != nil { return !value.isEmpty }
        return field.choices?.contains { $0.value == value } ?? false
    }

    static func choiceMessage(_ field: FieldDefinition) -> String {
        let labels = (field.choices ?? []).map(\.label.text)
        switch field.kind {
        case .multipleChoice: return "Choose from: \(labels.joined(separator: ", "))."
        case .rank: return "Put every choice in order, each once, separated by commas, first the most preferred: \(labels.joined(separator: ", "))."
        default: return "Choose one of: \(labels.joined(separator: ", "))."
        }
    }
}

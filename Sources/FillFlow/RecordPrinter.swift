import DraftStore
import Foundation
import FormModel
import SyncCore

/// Renders records for `fieldsheet records` and `fieldsheet show`.
///
/// What other people wrote (titles, labels, answers) is shown with its control characters as visible symbols
/// (`TerminalText`), and a line break inside an answer continues the answer indented, so no value can send
/// a terminal an escape sequence or pass itself off as another line of the record.
public enum RecordPrinter {
    /// One listing line: id, state, form id and version, last change (UTC), title; tab-separated.
    public static func line(_ summary: RecordSummary) -> String {
        var columns = [summary.id.lowercased, summary.state.rawValue, "\(shown(summary.form.id)) v\(summary.form.version)",
                       timestamp(summary.updatedAt), shown(summary.formTitle)]
        if let review = summary.review { columns.append(reviewText(review)) }
        return columns.joined(separator: "\t")
    }

    /// The office's review on one line: `sent back (rejected): <comment>` for a record sent back, else the
    /// state and any comment.
    public static func reviewText(_ review: RecordReview) -> String {
        review.display(comment: shown)
    }

    /// `text` on one line, with control characters visible.
    static func shown(_ text: String) -> String {
        TerminalText.visible(text)
    }

    /// An answer, whose line breaks continue it indented under its label.
    static func shownAnswer(_ text: String) -> String {
        TerminalText.visible(
            text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\n      "), allowing: ["\n"])
    }

    /// A record as a person reads it: each relevant field with its answer and any problem, in the form's
    /// `language` (one of its languages; nil for its default).
    /// `entities` are the entity lists the form reads (a choice of an entity shows its label, `entity(…)` reads
    /// them); nil reads none.
    public static func text(_ record: StoredRecord, form: FormDefinition, language: String? = nil, entities: (any EntityLookup)? = nil) -> String {
        let validator = FormValidator(form: form)
        let metadata = RecordMetadata(startedAt: record.createdAt, endedAt: record.state == .submitted ? record.submittedAt ?? record.updatedAt : nil, device: nil)
        var state = FormState(logic: validator.logic, answers: record.answers, metadata: metadata, entities: entities)
        state.language = language
        let report = validator.validate(state)
        var lines = [
            "Record \(record.id.lowercased)",
            "Form:    \(shown(form.title)) (\(shown(form.id)) v\(form.version))",
            "State:   \(record.state.rawValue)",
            "Created: \(timestamp(record.createdAt))",
            "Updated: \(timestamp(record.updatedAt))",
        ]
        if let submitted = record.submittedAt { lines.append("Submitted: \(timestamp(submitted))") }
        if let review = record.review { lines.append("Review:  \(reviewText(review))") }
        // Depth first: a repeat's instances, each with its fields indented under "Defect 2".
        var stack: [(field: FieldDefinition, prefix: String, depth: Int)] = form.allFields.reversed().map { ($0, "", 1) }
        while let (field, prefix, depth) = stack.popLast() {
            let key = AnswerKey.key(field.id, in: prefix)
            guard state.isRelevant(key) else { continue }
            let indent = String(repeating: "  ", count: depth)
            if field.kind == .repeat {
                let live = state.instances.live(field.id, in: prefix)
                let problems = shown(report.issues(for: key).map(\.message).joined(separator: " "))
                lines.append("\(indent)\(shown(state.text(field.label, at: key))): \(live.count) \(shown(state.text(field.instanceNoun, at: key).lowercased()))\(live.count == 1 ? "" : "s")\(problems.isEmpty ? "" : "   ! \(problems)")")
                for (number, instance) in live.enumerated().reversed() {
                    for child in (field.fields ?? []).reversed() { stack.append((child, instance.prefix, depth + 2)) }
                    stack.append((FieldDefinition(id: "\u{0}", kind: .note, label: LocalizedText("\(state.text(field.instanceNoun, at: key)) \(number + 1)")), instance.prefix, depth + 1))
                }
                continue
            }
            if field.id == "\u{0}" {
                lines.append("\(indent)\(shown(field.label.text))")
                continue
            }
            guard field.holdsValue else { continue }
            let value = state.value(key).map { shownAnswer(entityLabels($0, of: field, in: state) ?? $0.display(for: field, language: language)) } ?? "—"
            let problems = shown(report.issues(for: key).map(\.message).joined(separator: " "))
            lines.append("\(indent)\(shown(state.text(field.label, at: key)))\(field.isComputed ? " (computed)" : ""): \(value)\(problems.isEmpty ? "" : "   ! \(problems)")")
        }
        return lines.joined(separator: "\n")
    }

    /// An answer of a choice over an entity list as the entities' labels, each with its id: nil for any other
    /// field, or when the list does not hold one of them (the id is shown then).
    static func entityLabels(_ value: AnswerValue, of field: FieldDefinition, in state: FormState) -> String? {
        guard let list = field.choicesFrom?.entityList, let entities = state.entities else { return nil }
        let ids: [String]
        switch value {
        case .choice(let id): ids = [id]
        case .choices(let chosen): ids = chosen
        default: return nil
        }
        var shown: [String] = []
        for id in ids {
            guard let entity = entities.entity(id, in: list) else { return nil }
            shown.append("\(entity.label) (\(id))")
        }
        return shown.joined(separator: ", ")
    }

    /// A record as JSON: answers in their tagged form (`{"integer": 3}`, raw input as `{"raw": "…"}`)
    /// and the issues that would stop completion.
    public static func json(_ record: StoredRecord, form: FormDefinition) throws -> String {
        struct Output: Encodable {
            var id: String
            var formID: String
            var formVersion: Int
            var state: String
            var createdAt: String
            var updatedAt: String
            var submittedAt: String?
            var answers: [String: AnswerValue]
            var issues: [FieldIssue]

            private enum CodingKeys: String, CodingKey {
                case id, formID = "formId", formVersion, state, createdAt, updatedAt, submittedAt, answers, issues
            }
        }
        let output = Output(
            id: record.id.lowercased, formID: record.form.id, formVersion: record.form.version,
            state: record.state.rawValue, createdAt: timestamp(record.createdAt), updatedAt: timestamp(record.updatedAt),
            submittedAt: record.submittedAt.map(timestamp), answers: record.answers, issues: FormValidator(form: form).validate(record.answers).issues)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(output), as: UTF8.self)
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

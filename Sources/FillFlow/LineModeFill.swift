import DraftStore
import Foundation
import FormModel

/// Line mode: one prompt per relevant field, for pipes and scripts that answer questions.
///
/// Each prompt shows the label, the hint, numbered choices and the current answer (the default for a
/// new record) in brackets. Every answer is saved before the next prompt. Typing `:back` goes to the
/// previous field, `:clear` clears this one, `:cancel` is the Cancel button (it asks first when
/// something was typed). After the last field the form is completed; when that fails the problems
/// are listed and the first invalid field is asked again. End of input keeps everything as a draft.
public struct LineModeFill: Sendable {
    public var console: Console

    public init(console: Console = .standard) {
        self.console = console
    }

    public func run(_ session: FormSession) async throws -> FillOutcome {
        let form = session.form
        let id = session.recordID.uuidString.lowercased()
        console.line("\(form.title) — \(form.completionLabel) after the last field; :back, :clear, :cancel at any prompt.")
        var index = 0
        while true {
            let fields = await session.relevantFields.filter(\.kind.takesAnswer)
            if index >= fields.count {
                switch try await session.complete() {
                case .submitted:
                    console.line("\(form.completionLabel) done: record \(id) is submitted and queued for sync.")
                    return .submitted
                case .invalid(let report):
                    console.line("\(form.completionLabel) needs these fixed first:")
                    for issue in report.issues {
                        console.line("  \(form.field(issue.fieldID)?.label ?? issue.fieldID): \(issue.message)")
                    }
                    index = fields.firstIndex { $0.id == report.firstInvalidField } ?? 0
                    continue
                }
            }
            let field = fields[index]
            let current = await session.answers[field.id]
            prompt(field, number: index + 1, of: fields.count, current: current)
            guard let line = console.readLine() else {
                console.line("")
                try await session.dismiss(reason: .endOfInput)
                console.line(session.mode == .editSubmitted
                    ? "End of input: record \(id) keeps its edits."
                    : "End of input: kept as a draft. Resume it with `fieldsheet resume \(id)`.")
                return .kept
            }
            let command = line.trimmingCharacters(in: .whitespaces)
            switch command {
            case ":back":
                index = max(0, index - 1)
            case ":cancel":
                if let outcome = try await cancel(session, id: id) { return outcome }
            case ":clear":
                let issues = try await session.set(field.id, to: nil)
                if report(issues) { index += 1 }
            case "":
                if current == nil, field.required {
                    console.line("  ! \(field.kind.hasChoices ? "Required: choose an option." : "Required: enter a value.")")
                } else {
                    index += 1
                }
            default:
                let issues = try await session.set(field.id, input: line)
                if report(issues) { index += 1 }
            }
        }
    }

    /// Prints the issues; true when there were none (go on to the next field).
    private func report(_ issues: [FieldIssue]) -> Bool {
        for issue in issues {
            console.line("  ! \(issue.message) Try again (what you typed is kept until you change it).")
        }
        return issues.isEmpty
    }

    private func prompt(_ field: FieldDefinition, number: Int, of count: Int, current: AnswerValue?) {
        console.line("[\(number)/\(count)] \(field.label)\(field.required ? " (required)" : "")")
        if let hint = field.hint { console.line("  \(hint)") }
        if let choices = field.choices {
            for (offset, choice) in choices.enumerated() {
                console.line("  \(offset + 1)) \(choice.label)")
            }
        }
        let shown = current.map { " [\($0.display(for: field))]" } ?? ""
        console.say("\(field.label)\(shown): ")
    }

    /// The Cancel button in line mode; nil means go on editing.
    private func cancel(_ session: FormSession, id: String) async throws -> FillOutcome? {
        switch try await session.cancel() {
        case .closed:
            console.line("Cancelled; nothing was typed, nothing to discard.")
            return .discarded
        case .needsConfirmation(let confirmation):
            while true {
                console.line(confirmation.title)
                console.line(confirmation.message)
                for (offset, choice) in confirmation.choices.enumerated() {
                    console.line("  \(offset + 1)) \(choice.label)")
                }
                console.say("Choose 1, 2 or 3: ")
                guard let answer = console.readLine() else {
                    console.line("")
                    try await session.dismiss(reason: .endOfInput)
                    console.line("End of input: nothing discarded; kept as a draft. Resume it with `fieldsheet resume \(id)`.")
                    return .kept
                }
                guard let choice = Self.choice(answer, from: confirmation.choices) else {
                    console.line("  ! Type 1 (\(confirmation.choices[0].label)), 2 (\(confirmation.choices[1].label)) or 3 (\(confirmation.choices[2].label)).")
                    continue
                }
                switch try await session.resolve(choice) {
                case .discard?:
                    console.line(session.mode == .newRecord ? "Discarded: the new record no longer exists." : "Discarded this sheet's changes; the record is as it was when it opened.")
                    return .discarded
                case .keep?:
                    console.line("Saved as a draft. Resume it with `fieldsheet resume \(id)`.")
                    return .kept
                default:
                    return nil
                }
            }
        }
    }

    static func choice(_ answer: String, from choices: [ConfirmationChoice]) -> ConfirmationChoice? {
        let text = answer.trimmingCharacters(in: .whitespaces).lowercased()
        if let number = Int(text), choices.indices.contains(number - 1) { return choices[number - 1] }
        return choices.first { $0.label.lowercased() == text || $0.label.lowercased().hasPrefix(text) && !text.isEmpty }
    }
}

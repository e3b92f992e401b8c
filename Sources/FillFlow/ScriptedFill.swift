import DraftStore
import Foundation
import FormModel

/// Fills a presentation from `--set` assignments and ends it the way the command line asked.
public struct ScriptedFill: Sendable {
    public var console: Console

    public init(console: Console = .standard) {
        self.console = console
    }

    /// Applies `assignments` in order (all durable together, in one transaction, before anything else happens),
    /// then ends the presentation with `action`.
    /// `removals` name repeat instances (`defects[2]`) to remove, after the assignments' additions;
    /// `attachments` attach files (`photo=IMG_0042.jpg`), copied into the device home in the same transaction.
    public func run(_ session: FormSession, assignments: [FieldAssignment], removals: [String] = [], attachments: [FieldAssignment] = [], action: FillAction) async throws -> FillOutcome {
        let id = session.recordID.lowercased
        // A draft that moved to a newer version of its form as it opened: said once, before anything else.
        if let move = session.versionMove { console.line(TerminalText.visible(move.message)) }
        let results = try await session.set(
            addressed: assignments.map { ($0.field, $0.input) }, removing: removals,
            attaching: attachments.map { ($0.field, $0.input) })
        for (assignment, result) in zip(assignments, results) {
            for issue in result.issues {
                console.line("\(assignment.field): \(issue.message) (kept as typed: \"\(assignment.input)\")")
            }
        }
        let attached = await session.attachments
        for (attachment, result) in zip(attachments, results.dropFirst(assignments.count)) {
            if let reference = attached[result.key] {
                console.line("\(attachment.field): attached \(reference.display)")
            }
            for issue in result.issues {
                console.line("\(attachment.field): \(issue.message)")
            }
        }
        switch action {
        case .complete:
            switch try await session.complete() {
            case .submitted:
                console.line("\(session.form.title): \(session.form.completionLabel) done; record \(id) is submitted and queued for sync.")
                return .submitted
            case .invalid(let report):
                console.line("\(session.form.completionLabel) refused: \(report.issues.count) problem\(report.issues.count == 1 ? "" : "s") to fix.")
                let state = await session.state
                for issue in report.issues {
                    console.line("  \(state.address(of: issue.fieldID) ?? issue.fieldID) (\(state.describe(issue.fieldID))): \(issue.message)")
                }
                try await session.dismiss(reason: .endOfInput)
                console.line("Nothing was lost: the draft was kept. Fix it with `fieldsheet resume \(id) --set FIELD=VALUE --complete`.")
                return .invalid
            }
        case .dismiss:
            try await session.dismiss(reason: .escape)
            console.line(keptMessage(session, id: id))
            return .kept
        case .cancel(let discard):
            switch try await session.cancel() {
            case .closed:
                console.line("Cancelled; nothing was typed in this sheet, so there was nothing to discard.")
                return .discarded
            case .needsConfirmation(let confirmation):
                if discard {
                    switch try await session.discardChanges() {
                    case .removedNewRecord:
                        console.line("Discarded: the new record \(id) no longer exists.")
                    case .reverted(let fields):
                        console.line("Discarded this sheet's changes (\(fields.sorted().joined(separator: ", "))); record \(id) is as it was when the sheet opened.")
                    }
                    return .discarded
                }
                try await session.dismiss(reason: .cancel)
                console.line("\(confirmation.title) \(confirmation.message)")
                let how = session.mode == .newRecord
                    ? " To throw the draft away now, run `fieldsheet delete-draft \(id)`."
                    : ""
                console.line("Nothing was discarded without confirmation: the draft was kept (Save Draft). To discard, add --discard to --cancel.\(how)")
                return .kept
            }
        case .lineMode:
            return try await LineModeFill(console: console).run(session)
        }
    }

    func keptMessage(_ session: FormSession, id: String) -> String {
        session.mode == .editSubmitted
            ? "Record \(id) keeps its edits; it stays submitted."
            : "Kept as a draft. Resume it with `fieldsheet resume \(id)`."
    }
}

import ArgumentParser
import DraftStore
import FillFlow
import FormModel
import TerminalUI
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The glue `fill`, `resume` and `edit` share: print the record id, fill, end, exit with the outcome.
enum FillRunner {
    static func run(_ session: FormSession, options: FillOptions) async throws -> Never {
        let assignments = try options.fieldAssignments()
        let attachments = try options.fieldAttachments()
        do {
            try FieldAssignment.check(assignments, removals: options.removals, attachments: attachments, against: session.form)
            if let language = options.language, await session.setLanguage(language) == nil {
                let form = session.form
                throw ValidationError(form.languages.isEmpty
                    ? "--language \(language): the form \(form.id) is written in one language only."
                    : "--language \(language): the form \(form.id) is not written in it; its languages are \(form.languages.joined(separator: ", ")) (give a code, a name or the whole name).")
            }
        } catch {
            try? await session.dismiss(reason: .endOfInput)
            throw error
        }
        if options.action == .lineMode, assignments.isEmpty, attachments.isEmpty, options.removals.isEmpty, options.interface.fullScreen {
            // On a terminal with nothing scripted: the sheet, full screen; it ends the run when it closes.
            let status = try await options.interface.runApp(store: session.store, session: session)
            print(session.recordID.lowercased)
            throw ExitCode(status)
        }
        // Unbuffered, so a script has the id even if the process is stopped mid-fill.
        FileHandle.standardOutput.write(Data((session.recordID.lowercased + "\n").utf8))
        dismissOnSignals(session)
        let outcome = try await ScriptedFill().run(session, assignments: assignments, removals: options.removals, attachments: attachments, action: options.action)
        throw ExitCode(outcome.rawValue)
    }

    /// Ctrl-C, SIGTERM and SIGHUP are non-cancel dismissals: everything is kept as a draft, exit 3.
    static func dismissOnSignals(_ session: FormSession) {
        let triggers: [Int32: DismissalTrigger] = [SIGINT: .interrupt, SIGTERM: .terminate, SIGHUP: .hangup]
        SignalWatch.start(Array(triggers.keys)) { number in
            guard let trigger = triggers[number] else { return }
            Task {
                try? await session.dismiss(reason: trigger)
                warn("\nStopped by \(trigger.phrase): everything typed was kept. Resume it with `fieldsheet resume \(session.recordID.lowercased)`.")
                exit(FillOutcome.kept.rawValue)
            }
        }
    }
}

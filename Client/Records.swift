import FormModel
import ArgumentParser
import DraftStore
import FillFlow
import Foundation
import FormModel

extension RecordState: ExpressibleByArgument {}

extension FieldSheetCommand {
    /// `fieldsheet records [--state draft|submitted]`.
    struct Records: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List records, most recently changed first: id, state, form and version, updated (UTC), title; tab-separated."
        )

        @OptionGroup var home: HomeOptions

        @Option(help: "Only records in this state (draft or submitted).")
        var state: RecordState?

        func run() async throws {
            try await reportingErrors {
                let store = try home.openStore()
                // Streamed: memory stays flat however many records there are.
                try await store.forEachRecord(state: state) { summary in
                    print(RecordPrinter.line(summary))
                }
            }
        }
    }

    /// `fieldsheet show ID [--json]`.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one record: its state and each relevant field with any problem.")

        @OptionGroup var home: HomeOptions

        @Argument(help: "The record id.")
        var id: String

        @Flag(help: "Print JSON: answers in their tagged form ({\"integer\": 3}; input that does not fit as {\"raw\": …}) and the issues.")
        var json = false

        @Option(help: ArgumentHelp("Show the labels in one of the form's languages (its code, like fr, or its name); the device's language otherwise, else the form's default.", valueName: "language"))
        var language: String?

        func run() async throws {
            try await reportingErrors {
                let store = try home.openStore()
                let key = try recordID(id)
                let record = try await existingRecord(key, in: store)
                let form = try await store.form(record.form)
                var shown: String?
                if let language {
                    guard let found = form.language(named: language) else {
                        throw ValidationError(form.languages.isEmpty
                            ? "--language \(language): the form \(form.id) is written in one language only."
                            : "--language \(language): the form \(form.id) is not written in it; its languages are \(form.languages.joined(separator: ", ")).")
                    }
                    shown = found
                } else {
                    shown = try await store.preferredLanguage().flatMap { form.language(named: $0) }
                }
                print(json ? try RecordPrinter.json(record, form: form) : RecordPrinter.text(record, form: form, language: shown, entities: store))
            }
        }
    }

    /// `fieldsheet delete-draft ID [--yes]`.
    struct DeleteDraft: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete-draft",
            abstract: "Delete a draft, after asking (or with --yes). Submitted records are not deleted this way.",
            discussion: "Exit status: 0 deleted; 1 not deleted (declined, unknown record, not a draft, open elsewhere)."
        )

        @OptionGroup var home: HomeOptions

        @Argument(help: "The draft's record id.")
        var id: String

        @Flag(help: "Do not ask for confirmation.")
        var yes = false

        func run() async throws {
            try await reportingErrors {
                let store = try home.openStore()
                let key = try recordID(id)
                let record = try await existingRecord(key, in: store)
                guard record.state == .draft else {
                    throw DraftStoreError(.notADraft, "Record \(id) is \(record.state.rawValue), not a draft; only drafts can be deleted.")
                }
                if !yes {
                    let form = try await store.form(record.form)
                    FileHandle.standardError.write(Data("Delete the draft \(id) of \(TerminalText.visible(form.title)) (\(record.answers.count) answers)? This cannot be undone. [y/N]: ".utf8))
                    let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
                    guard answer == "y" || answer == "yes" else {
                        warn("Not deleted.")
                        throw ExitCode(1)
                    }
                }
                try await store.deleteDraft(key)
                warn("Deleted the draft \(id).")
            }
        }
    }
}

/// The record with `id` on this device, or an error saying how to list the ones there are.
func existingRecord(_ id: UUID, in store: DraftStore) async throws -> StoredRecord {
    guard let record = try await store.record(id), record.state != .deleted else {
        throw DraftStoreError(.unknownRecord, "There is no record \(id.lowercased) on this device. List records with `fieldsheet records`.")
    }
    return record
}

import ArgumentParser
import DraftStore
import FillFlow

extension FieldSheetCommand {
    /// `fieldsheet fill FORM`: opens a sheet for a new record.
    struct Fill: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fill a new record of a form; prints the record id first.",
            discussion: """
                With --complete, --dismiss or --cancel the sheet is filled from --set values and ended that way. \
                With none of them, line mode: one prompt per relevant field (hint, numbered choices, current value in brackets); \
                type :back, :clear or :cancel at any prompt; end of input keeps the draft. Every answer is saved before the next.

                \(FillOutcome.helpText)
                """
        )

        @OptionGroup var home: HomeOptions

        @Argument(help: "The form's id (see `fieldsheet forms`).")
        var form: String

        @OptionGroup var options: FillOptions

        func run() async throws {
            try await reportingErrors {
                let store = try home.openStore()
                let definition = try await store.form(id: form)
                if try await store.closedForms().contains(definition.id) {
                    warn("error: the form \(definition.id) was closed to new records by your project's admin (as of the last sync), so the server would refuse a new record of it. Records already sent can still be edited; `fieldsheet sync` learns when it is reopened.")
                    throw ExitCode(1)
                }
                try FieldAssignment.check(try options.fieldAssignments(), removals: options.removals, attachments: try options.fieldAttachments(), against: definition)
                let session = try await store.newRecord(formID: definition.id, version: definition.version)
                try await FillRunner.run(session, options: options)
            }
        }
    }

    /// `fieldsheet resume ID`: opens a sheet on a draft.
    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resume a draft; same options as fill. Discard reverts only what this sheet changed.",
            discussion: FillOutcome.helpText
        )

        @OptionGroup var home: HomeOptions

        @Argument(help: "The draft's record id (see `fieldsheet records --state draft`).")
        var id: String

        @OptionGroup var options: FillOptions

        func run() async throws {
            try await reportingErrors {
                let session = try await home.openStore().resumeDraft(try recordID(id))
                try await FillRunner.run(session, options: options)
            }
        }
    }

    /// `fieldsheet edit ID`: opens a sheet on a submitted record whose form allows it.
    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Edit a submitted record (when its form allows editing after submission); same options as fill.",
            discussion: FillOutcome.helpText
        )

        @OptionGroup var home: HomeOptions

        @Argument(help: "The submitted record's id (see `fieldsheet records --state submitted`).")
        var id: String

        @OptionGroup var options: FillOptions

        func run() async throws {
            try await reportingErrors {
                let session = try await home.openStore().editSubmitted(try recordID(id))
                try await FillRunner.run(session, options: options)
            }
        }
    }
}

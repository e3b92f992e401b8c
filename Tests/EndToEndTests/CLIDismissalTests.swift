import FieldSheetTesting
import Foundation
import Testing

/// Every row of the dismissal table through the `fieldsheet` binary, scripted with flags.
struct CLIDismissalTests {
    // Completion, valid: exit 0, submitted.
    @Test func completeSubmitsAValidRecord() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run("fill", "follow-up-job", "--set", "site=B2 basement", "--set", "priority=High", "--set", "notes=Bring a ladder", "--complete")
        #expect(fill.status == 0, "\(fill.output)")
        let id = try #require(CLIHome.recordID(fill))
        let listed = try await cli.run("records", "--state", "submitted")
        #expect(listed.stdout.hasPrefix(id + "\tsubmitted\tfollow-up-job v1"))
        let shown = try await cli.run("show", id)
        #expect(shown.stdout.contains("Site: B2 basement"))
        #expect(shown.stdout.contains("Priority: High"))
        #expect(shown.stdout.contains("Notes: Bring a ladder"))
    }

    // Completion, invalid: exit 2, every field error listed, draft kept.
    @Test func completeWithErrorsListsEveryFieldErrorAndKeepsTheDraft() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run("fill", "follow-up-job", "--set", "count=9", "--complete")
        #expect(fill.status == 2, "\(fill.output)")
        #expect(fill.stderr.contains("site (Site): Required: enter a value."))
        #expect(fill.stderr.contains("count (Technicians needed): Enter a whole number between 1 and 5."))
        let id = try #require(CLIHome.recordID(fill))
        #expect(try await cli.run("records", "--state", "draft").stdout.hasPrefix(id))
        let fixed = try await cli.run("resume", id, "--set", "site=Roof", "--set", "count=2", "--complete")
        #expect(fixed.status == 0, "\(fixed.output)")
    }

    // Cancel with nothing typed: close, nothing to discard, no record left.
    @Test func cancelWithNothingTypedClosesAndLeavesNoRecord() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run("fill", "follow-up-job", "--cancel")
        #expect(fill.status == 4, "\(fill.output)")
        #expect(try await cli.run("records").stdout.isEmpty)
    }

    // Cancel after typing without --discard: nothing thrown away, draft kept, says how to discard.
    @Test func cancelAfterTypingWithoutDiscardKeepsTheDraftAndSaysHowToDiscard() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run("fill", "follow-up-job", "--set", "site=B2", "--cancel")
        #expect(fill.status == 3, "\(fill.output)")
        #expect(fill.stderr.contains("--discard"))
        let id = try #require(CLIHome.recordID(fill))
        #expect(fill.stderr.contains("fieldsheet delete-draft \(id)"))
        #expect(try await cli.run("show", id).stdout.contains("Site: B2"))
    }

    // Cancel after typing, confirmed: a new record disappears.
    @Test func cancelWithDiscardRemovesANewRecord() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run("fill", "follow-up-job", "--set", "site=B2", "--cancel", "--discard")
        #expect(fill.status == 4, "\(fill.output)")
        let id = try #require(CLIHome.recordID(fill))
        #expect(try await cli.run("records").stdout.isEmpty)
        #expect(try await cli.run("show", id).status == 1)
    }

    // Cancel after typing, confirmed, on a resumed draft: back to what it was when the sheet opened.
    @Test func cancelWithDiscardRevertsAResumedDraftToWhenItOpened() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let id = try #require(CLIHome.recordID(try await cli.run("fill", "follow-up-job", "--set", "site=B2", "--set", "count=2", "--dismiss")))
        let before = try await cli.run("show", id, "--json").stdout
        let resume = try await cli.run("resume", id, "--set", "site=Roof", "--set", "count=", "--cancel", "--discard")
        #expect(resume.status == 4, "\(resume.output)")
        #expect(try await cli.run("show", id, "--json").stdout == before)
    }

    // Same on an edited submission: it stays submitted with its submitted values.
    @Test func cancelWithDiscardRevertsAnEditedSubmission() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob(editableAfterSubmit: true)
        let id = try #require(CLIHome.recordID(try await cli.run("fill", "follow-up-job", "--set", "site=Roof", "--complete")))
        let edit = try await cli.run("edit", id, "--set", "site=Cellar", "--cancel", "--discard")
        #expect(edit.status == 4, "\(edit.output)")
        let shown = try await cli.run("show", id).stdout
        #expect(shown.contains("State:   submitted"))
        #expect(shown.contains("Site: Roof"))
    }

    // Any other dismissal (Esc): keep everything as a draft; an edited submission keeps its edits.
    @Test func dismissKeepsTheDraftAndAnEditedSubmissionKeepsItsEdits() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob(editableAfterSubmit: true)
        let fill = try await cli.run("fill", "follow-up-job", "--set", "site=B2", "--set", "count=lots", "--dismiss")
        #expect(fill.status == 3, "\(fill.output)")
        #expect(fill.stderr.contains("count: Enter a whole number between 1 and 5."))
        let id = try #require(CLIHome.recordID(fill))
        let json = try await cli.run("show", id, "--json").stdout
        #expect(json.contains("\"raw\" : \"lots\""))
        #expect(json.contains("\"state\" : \"draft\""))
        let submitted = try #require(CLIHome.recordID(try await cli.run("fill", "follow-up-job", "--set", "site=Roof", "--complete")))
        let edit = try await cli.run("edit", submitted, "--set", "site=Cellar", "--dismiss")
        #expect(edit.status == 3, "\(edit.output)")
        #expect(try await cli.run("show", submitted).stdout.contains("Site: Cellar"))
    }

    // Editing is refused when the form does not allow it.
    @Test func editIsRefusedWhenTheFormForbidsIt() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob(editableAfterSubmit: false)
        let id = try #require(CLIHome.recordID(try await cli.run("fill", "follow-up-job", "--set", "site=Roof", "--complete")))
        let edit = try await cli.run("edit", id, "--set", "site=Cellar", "--dismiss")
        #expect(edit.status == 1)
        #expect(edit.stderr.contains("does not allow editing after submission"))
    }

    @Test func deleteDraftAsksFirstOrTakesYes() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let id = try #require(CLIHome.recordID(try await cli.run("fill", "follow-up-job", "--set", "site=B2", "--dismiss")))
        let declined = try await cli.run(["delete-draft", id], stdin: "n\n")
        #expect(declined.status == 1)
        #expect(declined.stderr.contains("[y/N]"))
        #expect(try await cli.run("records").stdout.hasPrefix(id))
        let confirmed = try await cli.run(["delete-draft", id], stdin: "y\n")
        #expect(confirmed.status == 0, "\(confirmed.output)")
        #expect(try await cli.run("records").stdout.isEmpty)
        let other = try #require(CLIHome.recordID(try await cli.run("fill", "follow-up-job", "--set", "site=B3", "--dismiss")))
        #expect(try await cli.run("delete-draft", other, "--yes").status == 0)
        let submitted = try #require(CLIHome.recordID(try await cli.run("fill", "follow-up-job", "--set", "site=Roof", "--complete")))
        let refused = try await cli.run("delete-draft", submitted, "--yes")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("not a draft"))
    }

    @Test func helpDocumentsTheExitCodes() async throws {
        let cli = CLIHome()
        let help = try await cli.run("fill", "--help")
        #expect(help.stdout.contains("3 kept as a draft"))
        #expect(help.stdout.contains("4 discarded"))
    }
}

import FieldSheetTesting
import Foundation
import Testing

/// `fieldsheet fill FORM` with answers on standard input (not a terminal): line mode.
struct LineModeTests {
    @Test func answeringEveryPromptCompletesTheForm() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        // site, priority (by number: 3 = High, which makes notes relevant), count, notes.
        let fill = try await cli.run(["fill", "follow-up-job"], stdin: "B2 basement\n3\n2\nBring a ladder\n")
        #expect(fill.status == 0, "\(fill.output)")
        #expect(fill.stderr.contains("[1/3] Site (required)"))
        #expect(fill.stderr.contains("Building and room, e.g. B2 basement"))
        #expect(fill.stderr.contains("  3) High"))
        #expect(fill.stderr.contains("Priority [Normal]: "))
        #expect(fill.stderr.contains("[4/4] Notes"))
        let id = try #require(CLIHome.recordID(fill))
        #expect(try await cli.run("show", id).stdout.contains("Notes: Bring a ladder"))
    }

    /// A label, hint, choice label and constraint message that name answers read with those answers, and so
    /// does `fieldsheet show`.
    @Test func textsThatNameAnswersShowThem() async throws {
        let cli = CLIHome()
        let form = cli.directory.write("greet.json", """
        { "id": "greet", "version": 1, "title": "Greet", "completionLabel": "Save", "pages": [{ "id": "p", "fields": [
          { "id": "who", "kind": "text", "label": "Name", "required": true },
          { "id": "age", "kind": "integer", "label": "How old is ${who}?", "hint": "${who} in whole years", "required": true,
            "constraint": ". < 130", "constraintMessage": "${who} cannot be that old." },
          { "id": "tea", "kind": "singleChoice", "label": "Tea for ${who}?", "choices": [{ "value": "y", "label": "Yes, ${who} wants tea" }, { "value": "n", "label": "No" }] }
        ] }] }
        """)
        #expect(try await cli.run("forms", "import", form).status == 0)
        let fill = try await cli.run(["fill", "greet"], stdin: "Ada\n200\n36\n1\n")
        #expect(fill.status == 0, "\(fill.output)")
        for text in ["[2/3] How old is Ada? (required)", "  Ada in whole years", "! Ada cannot be that old.", "[3/3] Tea for Ada?", "  1) Yes, Ada wants tea"] {
            #expect(fill.stderr.contains(text), "missing \(text) in \(fill.stderr)")
        }
        let shown = try await cli.run("show", try #require(CLIHome.recordID(fill))).stdout
        #expect(shown.contains("How old is Ada?: 36"), "\(shown)")
    }

    /// A note is shown where it stands, with the answers it names, when it is relevant; a note after the last
    /// question is shown before the form completes; a note that is not relevant is not shown.
    @Test func notesAreShownWhereTheyStandWithTheAnswersTheyName() async throws {
        let cli = CLIHome()
        let form = cli.directory.write("visit.json", """
        { "id": "visit", "version": 1, "title": "Visit", "completionLabel": "Save", "pages": [{ "id": "p", "fields": [
          { "id": "who", "kind": "text", "label": "Name", "required": true },
          { "id": "hello", "kind": "note", "label": "Greet ${who} first.", "hint": "Say who you are." },
          { "id": "late", "kind": "note", "label": "Apologise for the delay.", "relevant": "who == 'Bob'" },
          { "id": "age", "kind": "integer", "label": "Age" },
          { "id": "bye", "kind": "note", "label": "Thank ${who} for ${age} years of patience." }
        ] }] }
        """)
        #expect(try await cli.run("forms", "import", form).status == 0)
        let fill = try await cli.run(["fill", "visit"], stdin: "Ada\n36\n")
        #expect(fill.status == 0, "\(fill.output)")
        let output = fill.stderr
        let greeting = try #require(output.range(of: "Note: Greet Ada first.\n  Say who you are.\n[2/2] Age"), "\(output)")
        let thanks = try #require(output.range(of: "Note: Thank Ada for 36 years of patience.\nSave done"), "\(output)")
        #expect(greeting.upperBound < thanks.lowerBound)
        #expect(!output.contains("Apologise"), "a note that is not relevant stays hidden")
    }

    @Test func invalidInputIsPromptedAgainAndAnEmptyAnswerKeepsTheDefault() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        // Required site left empty first, then a count that is not a number, then out of range.
        let fill = try await cli.run(["fill", "follow-up-job"], stdin: "\nLobby\n\nmany\n7\n4\n")
        #expect(fill.status == 0, "\(fill.output)")
        #expect(fill.stderr.contains("! Required: enter a value."))
        #expect(fill.stderr.contains("! Enter a whole number between 1 and 5."))
        let shown = try await cli.run("show", try #require(CLIHome.recordID(fill))).stdout
        #expect(shown.contains("Priority: Normal"))
        #expect(shown.contains("Technicians needed: 4"))
    }

    @Test func backGoesToThePreviousField() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run(["fill", "follow-up-job"], stdin: "Lobby\n:back\nRoof\n\n\n")
        #expect(fill.status == 0, "\(fill.output)")
        #expect(try await cli.run("show", try #require(CLIHome.recordID(fill))).stdout.contains("Site: Roof"))
    }

    // End of input is a non-cancel dismissal: the draft is kept.
    @Test func endOfInputKeepsTheDraft() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run(["fill", "follow-up-job"], stdin: "B2 basement\n")
        #expect(fill.status == 3, "\(fill.output)")
        let id = try #require(CLIHome.recordID(fill))
        #expect(fill.stderr.contains("fieldsheet resume \(id)"))
        #expect(try await cli.run("records", "--state", "draft").stdout.hasPrefix(id))
        // Resuming in line mode shows the kept answer in brackets and completes.
        let resume = try await cli.run(["resume", id], stdin: "\n\n2\n")
        #expect(resume.status == 0, "\(resume.output)")
        #expect(resume.stderr.contains("Site [B2 basement]: "))
    }

    @Test func cancelWithNothingTypedClosesWithoutAsking() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run(["fill", "follow-up-job"], stdin: ":cancel\n")
        #expect(fill.status == 4, "\(fill.output)")
        #expect(!fill.stderr.contains("Discard Changes"))
        #expect(try await cli.run("records").stdout.isEmpty)
    }

    @Test func cancelAfterTypingAsksAndDiscardThrowsTheNewRecordAway() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run(["fill", "follow-up-job"], stdin: "B2\n:cancel\n1\n")
        #expect(fill.status == 4, "\(fill.output)")
        #expect(fill.stderr.contains("Discard changes to New Follow-up Job?"))
        #expect(fill.stderr.contains("1) Discard Changes"))
        #expect(fill.stderr.contains("2) Save Draft"))
        #expect(fill.stderr.contains("3) Keep Editing"))
        #expect(try await cli.run("records").stdout.isEmpty)
    }

    @Test func cancelAfterTypingThenSaveDraftKeepsIt() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run(["fill", "follow-up-job"], stdin: "B2\n:cancel\n2\n")
        #expect(fill.status == 3, "\(fill.output)")
        #expect(try await cli.run("records", "--state", "draft").stdout.hasPrefix(try #require(CLIHome.recordID(fill))))
    }

    @Test func cancelThenKeepEditingGoesOn() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run(["fill", "follow-up-job"], stdin: "B2\n:cancel\n3\n\n1\n")
        #expect(fill.status == 0, "\(fill.output)")
    }

    // End of input at the confirmation is a non-cancel dismissal too.
    @Test func endOfInputAtTheConfirmationKeepsTheDraft() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run(["fill", "follow-up-job"], stdin: "B2\n:cancel\n")
        #expect(fill.status == 3, "\(fill.output)")
        #expect(try await cli.run("records").stdout.hasPrefix(try #require(CLIHome.recordID(fill))))
    }

    // Discarding in a resumed draft reverts only this presentation.
    @Test func discardInAResumedDraftRevertsOnlyThisSheet() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let id = try #require(CLIHome.recordID(try await cli.run(["fill", "follow-up-job"], stdin: "B2\n")))
        let resume = try await cli.run(["resume", id], stdin: "Roof\n:cancel\n1\n")
        #expect(resume.status == 4, "\(resume.output)")
        #expect(try await cli.run("show", id).stdout.contains("Site: B2"))
    }
}

import Foundation
import FieldSheetTesting
import FormModel
import Testing
@testable import DraftStore

/// Every row of the dismissal table (README, "Presentation and dismissal"), through `FormSession`.
struct FormSessionDismissalTests {
    // Row: completion button, valid form.
    @Test func completingAValidFormSubmitsTheRecordAndQueuesIt() async throws {
        let fixture = try await Fixture()
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        try await session.set("site", to: .text("B2 basement"))
        #expect(try await session.complete() == .submitted)
        #expect(await session.isOpen == false)
        let record = try #require(try await fixture.store.record(session.recordID))
        #expect(record.state == .submitted)
        #expect(record.answers["site"] == .text("B2 basement"))
        #expect(try await fixture.outboxKinds(session.recordID) == ["create", "set", "submit"])
        #expect(try await fixture.presentationCount() == 0)
    }

    // Row: completion button, invalid form: stay, every error at its field, nothing lost.
    @Test func completingAnInvalidFormStaysOpenWithEveryFieldError() async throws {
        let fixture = try await Fixture()
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        try await session.set("count", input: "9")
        try await session.set("priority", input: "high")
        guard case .invalid(let report) = try await session.complete() else {
            Issue.record("an invalid form was submitted")
            return
        }
        #expect(Set(report.issues.map(\.fieldID)) == ["site", "count"])
        #expect(report.issues(for: "site").first?.code == .required)
        #expect(report.issues(for: "count").first?.code == .outOfRange)
        #expect(report.firstInvalidField == "site")
        #expect(await session.isOpen)
        let record = try #require(try await fixture.store.record(session.recordID))
        #expect(record.state == .draft)
        #expect(record.answers["count"] == .integer(9))
        // Fixing the fields then completing works in the same presentation.
        try await session.set("site", to: .text("Lobby"))
        try await session.set("count", to: .integer(3))
        #expect(try await session.complete() == .submitted)
    }

    // Row: explicit Cancel, nothing typed in this presentation (new record): close; nothing to discard.
    @Test func cancellingAnUntouchedNewRecordClosesAndLeavesNothing() async throws {
        let fixture = try await Fixture()
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        #expect(try await session.cancel() == .closed)
        #expect(try await fixture.store.record(session.recordID) == nil)
        #expect(try await fixture.store.outboxCount() == 0)
        #expect(try await fixture.presentationCount() == 0)
    }

    // Row: explicit Cancel, nothing typed in this presentation (resumed draft): close, draft unchanged.
    @Test func cancellingAnUntouchedResumedDraftClosesAndKeepsTheDraft() async throws {
        let fixture = try await Fixture()
        let id = try await fixture.draft()
        let before = try await fixture.store.record(id)
        let session = try await fixture.store.resumeDraft(id)
        #expect(try await session.cancel() == .closed)
        #expect(try await fixture.store.record(id) == before)
    }

    // Row: any dismissal of a brand-new record in which nothing was typed: no empty draft is left behind.
    @Test(arguments: [DismissalTrigger.escape, .outsideTap, .interrupt, .terminate, .hangup])
    func dismissingAnUntouchedNewRecordLeavesNothing(trigger: DismissalTrigger) async throws {
        let fixture = try await Fixture()
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        try await session.dismiss(reason: trigger)
        #expect(try await fixture.store.record(session.recordID) == nil)
        #expect(try await fixture.store.outboxCount() == 0)
        #expect(try await fixture.presentationCount() == 0)
    }

    // A new record that was typed into and cleared again holds nothing either.
    @Test func aNewRecordTypedIntoAndClearedLeavesNothingOnEsc() async throws {
        let fixture = try await Fixture()
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        try await session.set("site", to: .text("D"))
        try await session.set("site", to: nil)
        try await session.dismiss(reason: .escape)
        #expect(try await fixture.store.record(session.recordID) == nil)
    }

    // Typing only blanks is not user content: Cancel closes without asking.
    @Test func blankTextIsNotContentThatNeedsConfirmation() async throws {
        let fixture = try await Fixture()
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        try await session.set("site", to: .text("   "))
        #expect(try await session.cancel() == .closed)
        #expect(try await fixture.store.record(session.recordID) == nil)
    }

    // Row: explicit Cancel with content typed: confirmation; Discard removes a brand-new record.
    @Test func cancelAfterTypingAsksAndDiscardRemovesANewRecord() async throws {
        let fixture = try await Fixture()
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        try await session.set("site", to: .text("B2 basement"))
        guard case .needsConfirmation(let confirmation) = try await session.cancel() else {
            Issue.record("Cancel after typing must ask first")
            return
        }
        #expect(confirmation.choices == [.discardChanges, .saveDraft, .keepEditing])
        #expect(confirmation.title == "Discard changes to New Follow-up Job?")
        #expect(confirmation.message.hasSuffix("Discarding removes this new record."))
        #expect(confirmation.choices[confirmation.defaultIndex] == .keepEditing, "the safe choice is the default")
        // Asking threw nothing away.
        #expect(try await fixture.store.record(session.recordID)?.answers["site"] == .text("B2 basement"))
        #expect(try await session.discardChanges() == .removedNewRecord)
        #expect(try await fixture.store.record(session.recordID) == nil)
        #expect(try await fixture.store.outboxCount() == 0)
    }

    // Discard on a resumed draft: back to what it was when this sheet opened, earlier edits kept.
    @Test func discardRevertsAResumedDraftToWhenTheSheetOpened() async throws {
        let fixture = try await Fixture()
        let id = try await fixture.draft(site: "B2 basement", count: 2)
        let before = try #require(try await fixture.store.record(id))
        let outboxBefore = try await fixture.store.outboxCount(record: id)
        let session = try await fixture.store.resumeDraft(id)
        try await session.set("site", to: .text("Roof"))
        try await session.set("priority", input: "High")
        try await session.set("notes", to: .text("Bring a ladder"))
        try await session.set("count", to: nil)
        guard case .needsConfirmation(let confirmation) = try await session.cancel() else {
            Issue.record("Cancel after typing must ask first")
            return
        }
        #expect(confirmation.message.contains("4 fields"))
        #expect(try await session.discardChanges() == .reverted(fields: ["site", "priority", "notes", "count"]))
        let after = try #require(try await fixture.store.record(id))
        #expect(after.answers == before.answers)
        #expect(after.state == .draft)
        #expect(after.updatedAt == before.updatedAt)
        #expect(try await fixture.store.outboxCount(record: id) == outboxBefore)
    }

    // Discard on an edited submission: back to the submitted values, still submitted.
    @Test func discardRevertsAnEditedSubmission() async throws {
        let fixture = try await Fixture(editableAfterSubmit: true)
        let id = try await fixture.submitted(site: "Roof")
        let session = try await fixture.store.editSubmitted(id)
        try await session.set("site", to: .text("Cellar"))
        guard case .needsConfirmation = try await session.cancel() else {
            Issue.record("Cancel after typing must ask first")
            return
        }
        #expect(try await session.resolve(.discardChanges) == .discard)
        let record = try #require(try await fixture.store.record(id))
        #expect(record.state == .submitted)
        #expect(record.answers["site"] == .text("Roof"))
    }

    // The confirmation's Save Draft keeps everything; Keep Editing leaves the sheet open.
    @Test func saveDraftKeepsAndKeepEditingStaysOpen() async throws {
        let fixture = try await Fixture()
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        try await session.set("site", to: .text("B2"))
        _ = try await session.cancel()
        #expect(try await session.resolve(.keepEditing) == nil)
        #expect(await session.isOpen)
        try await session.set("count", to: .integer(4))
        _ = try await session.cancel()
        #expect(try await session.resolve(.saveDraft) == .keep(.cancel))
        #expect(await session.isOpen == false)
        let record = try #require(try await fixture.store.record(session.recordID))
        #expect(record.state == .draft)
        #expect(record.answers["site"] == .text("B2"))
        #expect(record.answers["count"] == .integer(4))
    }

    // Row: every other dismissal keeps everything; the record stays a draft, ready to resume.
    @Test(arguments: DismissalTrigger.allCases.filter(\.keepsEverything))
    func everyOtherDismissalKeepsTheDraft(trigger: DismissalTrigger) async throws {
        let fixture = try await Fixture()
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        try await session.set("site", to: .text("B2 basement"))
        try await session.set("count", input: "seven")
        try await session.dismiss(reason: trigger)
        #expect(await session.isOpen == false)
        let record = try #require(try await fixture.store.record(session.recordID))
        #expect(record.state == .draft)
        #expect(record.answers["site"] == .text("B2 basement"))
        #expect(record.answers["count"] == .raw("seven"))
        let resumed = try await fixture.store.resumeDraft(session.recordID)
        #expect(await resumed.answers == record.answers)
    }

    // Same rows for an edited submission: it keeps its edits and stays submitted.
    @Test func dismissingAnEditedSubmissionKeepsItsEdits() async throws {
        let fixture = try await Fixture(editableAfterSubmit: true)
        let id = try await fixture.submitted(site: "Roof")
        let session = try await fixture.store.editSubmitted(id)
        try await session.set("site", to: .text("Cellar"))
        try await session.dismiss(reason: .outsideTap)
        let record = try #require(try await fixture.store.record(id))
        #expect(record.state == .submitted)
        #expect(record.answers["site"] == .text("Cellar"))
    }

    // Row: process killed: noticed on the next open, treated as a non-cancel dismissal.
    @Test func aPresentationLeftOpenByAKilledProcessKeepsEverythingOnNextOpen() async throws {
        let fixture = try await Fixture()
        let id = try await fixture.draft(site: "B2", count: 1)
        let session = try await fixture.store.resumeDraft(id)
        try await session.set("site", to: .text("B3"))
        try await fixture.killOwnersOfOpenPresentations()
        let next = try fixture.reopen()
        #expect(next.recovered.map(\.recordID) == [id])
        #expect(try await next.openPresentations().isEmpty)
        let record = try #require(try await next.record(id))
        #expect(record.state == .draft)
        #expect(record.answers["site"] == .text("B3"))
        // A Cancel in the next presentation reverts only that presentation, not the killed one's edits.
        let again = try await next.resumeDraft(id)
        try await again.set("site", to: .text("B4"))
        _ = try await again.cancel()
        try await again.discardChanges()
        #expect(try await next.record(id)?.answers["site"] == .text("B3"))
    }

    @Test func dismissWithCompleteIsRefused() async throws {
        let fixture = try await Fixture()
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        await #expect(throws: DraftStoreError.self) { try await session.dismiss(reason: .complete) }
        #expect(await session.isOpen)
    }

    @Test func anEndedPresentationTakesNoMoreEdits() async throws {
        let fixture = try await Fixture()
        let id = try await fixture.draft()
        let session = try await fixture.store.resumeDraft(id)
        try await session.dismiss(reason: .escape)
        let error = await #expect(throws: DraftStoreError.self) { try await session.set("site", to: .text("x")) }
        #expect(error?.code == .presentationEnded)
    }
}

import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import Testing
@testable import TerminalApp
@testable import TerminalUI

/// The full-screen app driven by keys and clicks over a real device database: every row of the dismissal table.
struct AppModelTests {
    let directory = TemporaryDirectory()
    let store: DraftStore
    let model: AppModel
    static let wide = TerminalSize(columns: 120, rows: 40)

    init() async throws {
        store = try DraftStore(home: directory.url)
        let form = try #require(FormLoader().load(contentsOf: PackagePaths.file("Schema/forms/follow-up-job.json")).loaded?.form)
        let filter = try #require(FormLoader().load(contentsOf: PackagePaths.file("Schema/forms/add-note.json")).loaded?.form)
        _ = try await store.importForms([form, filter])
        model = AppModel(store: store, size: Self.wide)
        await model.reload()
    }

    func press(_ events: InputEvent...) async -> AppStep {
        var last = AppStep.redraw
        for event in events { last = await model.handle(event) }
        return last
    }

    func type(_ text: String) async {
        for character in text { _ = await model.handle(.character(character)) }
    }

    /// Opens New and chooses the follow-up job form (the second form, by id): the digit starts it.
    func startFollowUpJob() async throws {
        _ = await press(.character("n"), .character("2"))
        let sheet = try #require(await model.presented?.sheet)
        #expect(sheet.form.id == "follow-up-job")
        #expect(await model.stack.items.count == 1, "the New popover closed before the sheet opened")
    }

    func onlyRecord() async throws -> StoredRecord? {
        let records = try await store.records()
        #expect(records.count <= 1)
        return try await records.first.asyncMap { try await store.record($0.id) } ?? nil
    }

    @Test func completingAValidFormSubmitsIt() async throws {
        try await startFollowUpJob()
        await type("Depot A")
        await model.moveFocus(.complete)
        _ = await press(.enter)
        #expect(await model.presented == nil)
        #expect(try await onlyRecord()?.state == .submitted)
    }

    @Test func completingAnInvalidFormStaysWithErrorsAndFocusOnTheFirst() async throws {
        try await startFollowUpJob()
        await model.moveFocus(.complete)
        _ = await press(.enter)
        let sheet = try #require(await model.presented?.sheet)
        #expect(sheet.focus == .field("site"))
        #expect(sheet.errors["site"] == "Required: enter a value.")
        #expect(await model.render().plainText().contains("⚠ Required: enter a value."))
    }

    @Test func cancelWithNothingTypedClosesAndLeavesNoRecord() async throws {
        try await startFollowUpJob()
        await model.moveFocus(.cancel)
        _ = await press(.enter)
        #expect(await model.presented == nil)
        #expect(try await store.records().isEmpty)
    }

    @Test func cancelAfterTypingAsksAndDiscardRemovesTheNewRecord() async throws {
        try await startFollowUpJob()
        await type("Depot A")
        await model.moveFocus(.cancel)
        _ = await press(.enter)
        #expect(await model.presented?.sheet.confirmation != nil)
        #expect(await model.render().plainText().contains("Discard Changes"))
        _ = await press(.enter)  // Keep Editing is selected first: nothing lost
        #expect(await model.presented?.sheet.confirmation == nil)
        #expect(await model.presented != nil)
        _ = await press(.enter, .up, .up, .enter)  // Cancel again, up to Discard Changes
        #expect(await model.presented == nil)
        #expect(try await store.records().isEmpty)
    }

    @Test func saveDraftAndKeepEditingFromTheActionSheet() async throws {
        try await startFollowUpJob()
        await type("Depot A")
        await model.moveFocus(.cancel)
        _ = await press(.enter, .enter)  // Keep Editing, preselected
        #expect(await model.presented?.sheet.confirmation == nil)
        #expect(await model.presented != nil)
        await model.moveFocus(.cancel)
        _ = await press(.enter, .up, .enter)  // Save Draft
        #expect(await model.presented == nil)
        let record = try #require(try await onlyRecord())
        #expect(record.state == .draft)
        #expect(record.answers["site"] == .text("Depot A"))
    }

    @Test func discardRevertsOnlyThisPresentationOfAResumedDraft() async throws {
        try await startFollowUpJob()
        await type("Depot A")
        _ = await press(.escape)
        _ = await press(.enter)  // resume the draft
        await type(" North")
        await model.moveFocus(.cancel)
        _ = await press(.enter, .up, .up, .enter)  // Discard Changes
        #expect(await model.render().plainText().contains("Changes discarded."))
        #expect(try await onlyRecord()?.answers["site"] == .text("Depot A"))
    }

    @Test(arguments: ["escape", "outsideClick"])
    func everyOtherWayOutKeepsTheDraft(way: String) async throws {
        try await startFollowUpJob()
        await type("Depot A")
        if way == "escape" {
            _ = await press(.escape)
        } else {
            _ = await press(.mouse(MouseEvent(action: .press, column: 2, row: 30)))  // on the dimmed backdrop
        }
        #expect(await model.presented == nil)
        let record = try #require(try await onlyRecord())
        #expect(record.state == .draft)
        #expect(record.answers["site"] == .text("Depot A"))
        #expect(await model.home.statusLine.hasPrefix("Draft saved."))
    }

    @Test func ctrlCKeepsEverythingAndExits130() async throws {
        try await startFollowUpJob()
        await type("Depot A")
        #expect(await press(.control("c")) == .exit(130))
        #expect(try await onlyRecord()?.answers["site"] == .text("Depot A"))
    }

    @Test(arguments: [(DismissalTrigger.terminate, Int32(143)), (.hangup, 129)])
    func signalsKeepEverythingAndExit(trigger: DismissalTrigger, status: Int32) async throws {
        try await startFollowUpJob()
        await type("Depot A")
        #expect(await model.stop(trigger, status: status) == .exit(status))
        let record = try #require(try await onlyRecord())
        #expect(record.state == .draft && record.answers["site"] == .text("Depot A"))
        #expect(try await store.openPresentations().isEmpty, "the presentation was ended, not left open")
    }

    @Test func onePopoverAtATimeAndAClickOnAnotherControlSwitches() async throws {
        _ = await press(.character("n"))
        #expect(await model.presented?.sheet.form.id == BuiltInSheets.newID)
        let filter = HomeLayout(size: Self.wide).filterControl
        _ = await press(.mouse(MouseEvent(action: .press, column: filter.x + 1, row: filter.y)))
        #expect(await model.presented?.sheet.form.id == BuiltInSheets.filterID)
        #expect(await model.stack.items.count == 1)
    }

    @Test func theFilterAppliesAsItIsChosenAndAClickOutsideKeepsIt() async throws {
        try await startFollowUpJob()
        await type("Depot A")
        _ = await press(.escape)
        _ = await press(.character("f"), .character("1"))  // untick Drafts
        _ = await press(.mouse(MouseEvent(action: .press, column: 100, row: 30)))
        #expect(await model.presented == nil)
        #expect(await model.home.visibleRecords.isEmpty)
    }

    @Test func deletingADraftAsksFirst() async throws {
        try await startFollowUpJob()
        await type("Depot A")
        _ = await press(.escape, .character("d"))
        #expect(await model.render().plainText().contains("Delete this draft?"))
        _ = await press(.enter)  // Keep is selected first
        #expect(try await store.records().count == 1)
        _ = await press(.character("d"), .left, .enter)
        #expect(try await store.records().isEmpty)
    }

    @Test func resizingToCompactWidthShowsTheSheetFullScreenWithInputIntact() async throws {
        try await startFollowUpJob()
        await type("Depot A")
        await model.resize(TerminalSize(columns: 80, rows: 24))
        let text = await model.render().plainText()
        #expect(text.hasPrefix("┌"), "the sheet starts at the top-left corner")
        #expect(text.contains("[Depot A"))
        #expect(await model.presented?.sheet.focus == .field("site"))
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

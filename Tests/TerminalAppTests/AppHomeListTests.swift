import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import Testing
@testable import TerminalApp
@testable import TerminalUI

/// The home list over a real device database: one summary query, values read only for what is on
/// screen, search over titles and values, and the Filter's Cancel.
struct AppHomeListTests {
    let directory = TemporaryDirectory()
    let store: DraftStore
    let model: AppModel

    init() async throws {
        store = try DraftStore(home: directory.url)
        let form = try #require(FormLoader().load(contentsOf: PackagePaths.file("Schema/forms/follow-up-job.json")).loaded?.form)
        _ = try await store.importForms([form])
        for site in ["Depot A", "Pump house", "North Yard"] {
            let session = try await store.newRecord(formID: form.id)
            try await session.set("site", to: .text(site))
            try await session.dismiss(reason: .escape)
        }
        model = AppModel(store: store, size: TerminalSize(columns: 120, rows: 40))
        await model.reload()
    }

    @Test func theListComesFromOneSummaryQueryWithHeadlinesForTheRowsOnScreen() async throws {
        let summaries = try await store.recordListSummaries()
        #expect(summaries.count == 3)
        #expect(summaries.allSatisfy { $0.state == .draft && $0.waitingChanges > 0 && $0.openConflicts == 0 })
        #expect(await model.home.records.map(\.headline) == ["North Yard", "Pump house", "Depot A"])
        #expect(await model.home.selectedDetails.first { $0.label == "Site" }?.value == "North Yard")
        _ = await model.handle(.down)
        #expect(await model.home.selectedDetails.first { $0.label == "Site" }?.value == "Pump house")
    }

    @Test func slashSearchesValuesAndEscClears() async throws {
        await model.waitForSearchIndex()
        _ = await model.handle(.character("/"))
        for character in "PUMP" { _ = await model.handle(.character(character)) }
        #expect(await model.home.visibleRecords.map(\.headline) == ["Pump house"])
        #expect(await model.render().plainText().contains("/PUMP▏"))
        _ = await model.handle(.enter)
        #expect(await model.home.isEditingSearch == false)
        #expect(await model.home.visibleRecords.count == 1, "Enter keeps the search")
        _ = await model.handle(.escape)
        #expect(await model.home.visibleRecords.count == 3)
        // The form's title is searchable too.
        _ = await model.handle(.character("/"))
        for character in "follow-up" { _ = await model.handle(.character(character)) }
        #expect(await model.home.visibleRecords.count == 3)
    }

    @Test func filterCancelPutsTheFilterBack() async throws {
        _ = await model.handle(.character("f"))
        _ = await model.handle(.character("1"))  // untick Drafts: applies at once
        #expect(await model.home.visibleRecords.isEmpty)
        await model.moveFocus(.cancel)
        _ = await model.handle(.enter)
        #expect(await model.presented == nil)
        #expect(await model.home.visibleRecords.count == 3)
        #expect(await model.home.shownStates.isEmpty)
    }

    @Test func newStartsTheChosenFormWithOneKeyAndTheStackIsEmptyAfterwards() async throws {
        await model.resize(TerminalSize(columns: 80, rows: 24))
        for _ in 0..<2 {
            _ = await model.handle(.character("n"))
            _ = await model.handle(.character("1"))
            #expect(await model.presented?.sheet.form.id == "follow-up-job")
            _ = await model.handle(.escape)
            #expect(await model.presented == nil)
            #expect(await model.stack.items.isEmpty, "the compact chooser left the stack")
        }
        #expect(try await store.records().count == 3, "nothing typed, nothing kept")
    }

    /// The selected record's details read as its sheet does: in the device's language, and a label showing
    /// answers (`${name}`) shows this record's.
    @Test func detailsAreInTheDevicesLanguageWithTheAnswersTheirLabelsShow() async throws {
        let json = #"""
        {"id": "visit", "version": 1, "title": "Visit", "presentation": "formSheet", "completionLabel": "Submit",
         "languages": ["English", "Français (fr)"], "defaultLanguage": "English",
         "pages": [{"id": "p", "fields": [
           {"id": "site", "kind": "text", "label": {"English": "Site", "Français (fr)": "Site visité"}},
           {"id": "state", "kind": "singleChoice", "label": {"English": "State of ${site}", "Français (fr)": "État de ${site}"},
            "choices": [{"value": "good", "label": {"English": "Good", "Français (fr)": "Bon"}}]}]}]}
        """#
        let form = try #require(FormLoader().load(Data(json.utf8), file: "visit.json").loaded?.form)
        _ = try await store.importForms([form])
        let session = try await store.newRecord(formID: "visit")
        try await session.set("site", to: .text("Quai 4"))
        try await session.set("state", to: .choice("good"))
        try await session.dismiss(reason: .escape)
        try await store.setPreferredLanguage("fr")
        await model.reload()
        let index = try #require(await model.home.visibleRecords.firstIndex { $0.headline == "Quai 4" })
        for _ in 0..<4 { _ = await model.handle(.up) }
        for _ in 0..<index { _ = await model.handle(.down) }
        #expect(await model.home.selected?.headline == "Quai 4")
        await model.loadDetails()
        let details = await model.home.selectedDetails
        #expect(details.contains { $0.label == "Site visité" && $0.value == "Quai 4" }, "\(details)")
        #expect(details.contains { $0.label == "État de Quai 4" && $0.value == "Bon" }, "\(details)")
        // Back in the form's default language.
        try await store.setPreferredLanguage(nil)
        await model.reload()
        await model.loadDetails()
        let english = await model.home.selectedDetails
        #expect(english.contains { $0.label == "State of Quai 4" && $0.value == "Good" }, "\(english)")
    }

    @Test func noticesExpire() async throws {
        _ = await model.handle(.character("s"))
        #expect(await model.home.notice?.hasPrefix("Not logged in") == true)
        #expect(await model.tick(now: Date().addingTimeInterval(AppModel.noticeLifetime + 1)))
        #expect(await model.home.notice == nil)
    }
}

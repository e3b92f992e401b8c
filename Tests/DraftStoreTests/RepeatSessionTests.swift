import FieldSheetTesting
import Foundation
import FormModel
import SyncCore
import Testing
@testable import DraftStore

/// FormSession with repeat groups: instances with stable ids made here, durable adds and removals, computed
/// values kept current, validation over instances.
struct RepeatSessionTests {
    static func store() async throws -> (TemporaryDirectory, DraftStore) {
        let directory = TemporaryDirectory("repeats")
        let store = try DraftStore(home: directory.url)
        let loaded = FormLoader().load(contentsOf: PackagePaths.file("Schema/forms/defect-inspection.json"))
        try await store.importForms([try #require(loaded.loaded?.form, "\(loaded.findings)")])
        return (directory, store)
    }

    @Test func instancesAreAddedEditedAndRemovedDurably() async throws {
        let (directory, store) = try await Self.store()
        let session = try await store.newRecord(formID: "defect-inspection")
        try await session.set("site", to: .text("Depot"))
        let first = try await session.addInstance(to: "defects")
        let second = try await session.addInstance(to: "defects")
        #expect(first.hasPrefix("defects/") && first != second)
        #expect(UUID(uuidString: String(first.dropFirst("defects/".count))) != nil)
        try await session.set(first + "/severity", input: "high")
        try await session.set(first + "/cost", input: "1200")
        try await session.set(second + "/cost", input: "30.5")
        #expect(await session.computedValue("total_cost") == .decimal(Decimal(string: "1230.5")!))
        #expect(await session.computedValue("defect_count") == .integer(2))
        #expect(await session.choices(for: first + "/action").map(\.value) == ["repair_now", "close_site", "photograph"])
        #expect(await session.isRelevant(first + "/urgent_note"))
        #expect(!(await session.isRelevant(second + "/urgent_note")))
        #expect(await session.instanceHasContent(first))
        try await session.removeInstance(second)
        #expect(await session.instances(of: "defects").map(\.prefix) == [first])
        #expect(await session.computedValue("total_cost") == .decimal(1200))
        await #expect(throws: DraftStoreError.self) { try await session.set("total_cost", to: .decimal(1)) }
        await #expect(throws: DraftStoreError.self) { try await session.set("defects/nope/severity", input: "high") }
        await #expect(throws: DraftStoreError.self) { try await session.addInstance(to: "site") }
        try await session.dismiss(reason: .escape)

        // Everything was on disk: another process sees the same instances, and the removed one as a tombstone.
        let reopened = try DraftStore(home: directory.url)
        let record = try #require(try await reopened.record(session.recordID))
        #expect(record.answers[second + "/@removed"] == .boolean(true))
        #expect(record.answers[first + "/severity"] == .choice("high"))
        #expect(record.answers["total_cost"] == nil, "computed values are derived, never stored")
        let resumed = try await reopened.resumeDraft(session.recordID)
        #expect(await resumed.instances(of: "defects").count == 1)
        // Editing inside the removed instance brings it back.
        try await resumed.set(second + "/location", input: "Cellar")
        #expect(await resumed.instances(of: "defects").count == 2)
        #expect(await resumed.answers[second + "/@removed"] == .boolean(false))
        try await resumed.dismiss(reason: .escape)
    }

    /// A read of the form's own fields (a list's headline, details and search text) gives exactly the top-level
    /// answers and sync metadata of a whole read — synced values, stamps that differ from the shared one, unsent
    /// edits and cleared fields — without the repeat instances' answers.
    @Test func aTopLevelReadIsTheWholeReadWithoutTheInstances() async throws {
        let (_, store) = try await Self.store()
        let record = UUID()
        let shared = HybridTimestamp(rawValue: 99)
        let fields = RecordFields([
            "site": FieldState(value: .text("Depot"), revision: 3, hlc: shared, clientID: "device-a"),
            "inspected_on": FieldState(value: .date("2026-11-01"), revision: 2, hlc: HybridTimestamp(rawValue: 42), clientID: "device-b"),
            "defects/7c37e370-0000-4000-8000-000000000001/@position": FieldState(value: .integer(1), revision: 3, hlc: shared, clientID: "device-a"),
            "defects/7c37e370-0000-4000-8000-000000000001/location": FieldState(value: .text("Cellar"), revision: 1, hlc: HybridTimestamp(rawValue: 7), clientID: "device-b"),
        ])
        var writer = PullPageWriter()
        writer.append(RecordEnvelope(
            recordID: record, form: FormKey(id: "defect-inspection", version: 1), state: .draft, revision: 3,
            sequence: 1, author: "someone", fields: fields))
        guard case .applied = try await store.applyPullPage(writer.finish(cursor: 1, hasMore: false, serverClock: HybridTimestamp(rawValue: 100))) else {
            Issue.record("the page was not applied")
            return
        }
        let session = try await store.resumeDraft(record)
        try await session.set("site", to: .text("Depot 2"))
        try await session.set("inspected_on", to: nil)
        try await session.set("defects/7c37e370-0000-4000-8000-000000000001/location", to: .text("Attic"))
        try await session.dismiss(reason: .escape)

        let whole = try #require(try await store.record(record))
        let top = try #require(try await store.record(record, answers: .topLevel))
        #expect(whole.answers.keys.contains { $0.contains("/") }, "the whole read has the instance's answers")
        #expect(top.answers == whole.answers.filter { !$0.key.contains("/") })
        #expect(top.answers["site"] == .text("Depot 2"))
        #expect(top.synced.states == whole.synced.states.filter { !$0.key.contains("/") })
        #expect(top.pending == whole.pending.filter { !$0.key.contains("/") })
        #expect(top.pending["inspected_on"] == .some(nil), "a cleared field stays cleared")
        #expect(top.updatedAt == whole.updatedAt && top.state == whole.state && top.serverRevision == whole.serverRevision)
        #expect(try await store.records([record, UUID()], answers: .topLevel) == [top], "an id that is not there is skipped")
        // The search text is made of the same fields either way.
        let form = try await store.form(id: "defect-inspection", version: 1)
        #expect(RecordSearch.text(of: top, formTitle: "Defects", form: form) == RecordSearch.text(of: whole, formTitle: "Defects", form: form))
    }

    /// once() and uuid(): a new record stores its uuid() at once, a once() when it first has a value; both are
    /// read back from the record, in this process and in another, and never computed again.
    @Test func keptCalculationsAreStoredWithTheRecord() async throws {
        let directory = TemporaryDirectory("kept")
        let store = try DraftStore(home: directory.url)
        let json = #"""
        { "id": "kept", "version": 1, "title": "Kept", "completionLabel": "Save",
          "pages": [{ "id": "main", "fields": [
            { "id": "name", "kind": "text", "label": "Name" },
            { "id": "first_name", "kind": "calculate", "label": "First name", "calculation": "once(name)" },
            { "id": "key", "kind": "calculate", "label": "Key", "calculation": "uuid()" },
            { "id": "visits", "kind": "repeat", "label": "Visits", "instanceLabel": "Visit", "fields": [
                { "id": "visit_key", "kind": "calculate", "label": "Visit key", "calculation": "once(uuid())" }] }] }] }
        """#
        let loaded = FormLoader().load(Data(json.utf8), file: "kept.json")
        try await store.importForms([try #require(loaded.loaded?.form, "\(loaded.findings)")])
        let session = try await store.newRecord(formID: "kept")
        let key = try #require(await session.answers["key"], "stored with the new record")
        #expect(await session.computedValue("key") == key)
        #expect(await session.changes.changedFields.isEmpty, "nothing typed yet")
        try await session.set("name", input: "Ann")
        #expect(await session.answers["first_name"] == .text("Ann"))
        try await session.set("name", input: "Bob")
        #expect(await session.computedValue("first_name") == .text("Ann"))
        let visit = try await session.addInstance(to: "visits")
        let visitKey = try #require(await session.answers[visit + "/visit_key"], "a new instance keeps its own")
        try await session.dismiss(reason: .escape)

        let reopened = try DraftStore(home: directory.url)
        let record = try #require(try await reopened.record(session.recordID))
        #expect(record.answers["key"] == key && record.answers["first_name"] == .text("Ann") && record.answers[visit + "/visit_key"] == visitKey)
        let resumed = try await reopened.resumeDraft(session.recordID)
        #expect(await resumed.computedValue("key") == key, "read back, not computed again")
        #expect(await resumed.computedValue(visit + "/visit_key") == visitKey)
        let issues = await resumed.validation.issues
        #expect(issues.isEmpty, "\(issues)")
        await #expect(throws: DraftStoreError.self) { try await resumed.set("key", to: .text("typed")) }
        try await resumed.dismiss(reason: .escape)
    }

    @Test func completionChecksEveryInstanceAndNamesIt() async throws {
        let (_, store) = try await Self.store()
        let session = try await store.newRecord(formID: "defect-inspection")
        try await session.set("site", to: .text("Depot"))
        let results = try await session.set(addressed: [
            ("defects[1].location", "Roof"), ("defects[1].severity", "low"), ("defects[1].action", "repair_now"),
            ("defects[2].location", "Gate"), ("defects[2].severity", "high"), ("defects[2].action", "Close the site"),
        ])
        #expect(results.map(\.key).allSatisfy { $0.hasPrefix("defects/") })
        #expect(results[2].issues.map(\.code) == [.notAChoice])
        guard case .invalid(let report) = try await session.complete() else {
            Issue.record("completion should be refused")
            return
        }
        let state = await session.state
        #expect(report.issues.map { state.describe($0.fieldID) } == ["Defect 1 › Action", "Defect 2 › Why it cannot wait"])
        try await session.set(addressed: [("defects[1].action", "2"), ("defects[2].urgent_note", "Hinge broken")], removing: [])
        let again = try await session.set(addressed: [("defects[1].action", "note")], removing: ["defects[2]"])
        #expect(again.first?.issues.isEmpty == true)
        #expect(try await session.complete() == .submitted)
    }

    @Test func badAddressesSaveNothing() async throws {
        let (_, store) = try await Self.store()
        let session = try await store.newRecord(formID: "defect-inspection")
        for (address, message) in [("defects[3].location", "has no defect 3"), ("defects[1].nope", "no field \"nope\""), ("defect[1].location", "no repeat"),
                                   ("defects[0].x", "not a field address"), ("defects[1]", "names an instance")] {
            await #expect {
                try await session.set(addressed: [("site", "Depot"), (address, "x")])
            } throws: { error in
                (error as? DraftStoreError)?.message.contains(message) == true
            }
        }
        #expect(await session.answers["site"] == nil)
        #expect(await session.instances(of: "defects").isEmpty)
        try await session.dismiss(reason: .escape)
    }
}

/// A session gives its form's expressions and texts the record's metadata: when it was created, on which device.
struct RecordMetadataSessionTests {
    @Test func aSessionReadsWhenAndWhereItsRecordWasCreated() async throws {
        let directory = TemporaryDirectory("record-metadata")
        let store = try DraftStore(home: directory.url)
        let json = #"""
        { "id": "visit", "version": 1, "title": "Visit", "completionLabel": "Save", "pages": [{ "id": "main", "fields": [
          { "id": "notes", "kind": "text", "label": "Notes" },
          { "id": "where", "kind": "calculate", "label": "Device", "calculation": "record.device" },
          { "id": "told", "kind": "note", "label": "Started ${record.start} on ${record.device}" }] }] }
        """#
        let loaded = FormLoader().load(Data(json.utf8), file: "visit.json")
        try await store.importForms([try #require(loaded.loaded?.form, "\(loaded.findings)")])
        let before = ExpressionClock.local(at: Date().addingTimeInterval(-60)).now
        let session = try await store.newRecord(formID: "visit")
        let start = try #require(session.metadata.start)
        #expect(session.metadata.device == store.deviceID && start >= before && start <= ExpressionClock.local(at: Date().addingTimeInterval(60)).now)
        #expect(await session.computedValue("where") == .text(store.deviceID))
        #expect(await session.state.text("Started ${record.start} on ${record.device}", at: "told")
                == "Started \(start.replacingOccurrences(of: "T", with: " ")) on \(store.deviceID)")
        try await session.set("notes", to: .text("Gate locked"))
        try await session.dismiss(reason: .escape)
        // Resumed later, the record keeps the time it was created.
        let resumed = try await store.resumeDraft(session.recordID)
        #expect(resumed.metadata == session.metadata)
        try await resumed.dismiss(reason: .escape)
    }
}

/// The device's language is a setting of its database: a sheet opens in it when its form is written in it,
/// switches at any point without losing what was typed, and a form not written in it shows its default.
struct LanguageSessionTests {
    @Test func aSheetOpensInTheDevicesLanguageAndSwitchesKeepingItsAnswers() async throws {
        let directory = TemporaryDirectory("language-session")
        let store = try DraftStore(home: directory.url)
        let json = #"""
        { "id": "visit", "version": 1, "title": "Visit", "completionLabel": "Save",
          "languages": ["English (en)", "Français (fr)"],
          "pages": [{ "id": "main", "fields": [
          { "id": "site", "kind": "text", "label": { "English (en)": "Site", "Français (fr)": "Lieu" }, "required": true },
          { "id": "kind", "kind": "singleChoice", "label": "Kind", "required": true,
            "choices": [{ "value": "office", "label": { "English (en)": "Office", "Français (fr)": "Bureau" } }] }] }] }
        """#
        let loaded = FormLoader().load(Data(json.utf8), file: "visit.json")
        try await store.importForms([try #require(loaded.loaded?.form, "\(loaded.findings)")])
        #expect(try await store.preferredLanguage() == nil)
        try await store.setPreferredLanguage("fr")
        #expect(try await store.preferredLanguage() == "fr")

        let session = try await store.newRecord(formID: "visit")
        #expect(session.openedLanguage == "Français (fr)")
        #expect(await session.language == "Français (fr)")
        let site = try #require(session.form.field("site"))
        #expect(await session.state.text(site.label, at: "site") == "Lieu")
        try await session.set("site", to: .text("Dépôt"))
        // A choice typed by its French label is stored by its value.
        try await session.set("kind", input: "Bureau")
        #expect(await session.answers["kind"] == .choice("office"))
        // Switching in the middle changes what is shown, not what is stored.
        #expect(await session.setLanguage("en") == "English (en)")
        #expect(await session.state.text(site.label, at: "site") == "Site")
        #expect(await session.answers == ["site": .text("Dépôt"), "kind": .choice("office")])
        // A language the form is not written in shows its default.
        #expect(await session.setLanguage("de") == nil)
        #expect(await session.language == nil)
        try await session.dismiss(reason: .escape)

        // Reopened (the setting outlives the store), the draft is in the device's language, with its answers.
        let reopened = try DraftStore(home: directory.url)
        let resumed = try await reopened.resumeDraft(session.recordID)
        #expect(await resumed.language == "Français (fr)")
        #expect(await resumed.answers == ["site": .text("Dépôt"), "kind": .choice("office")])
        #expect(try await resumed.complete() == .submitted, "the record completes after the switches")
        try await reopened.setPreferredLanguage(nil)
        #expect(try await reopened.preferredLanguage() == nil)
    }
}

import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import SyncCore
import Testing
@testable import TerminalApp
@testable import TerminalUI

/// A choice field over an entity list of 100,000 households is type-to-search, in the app and in line mode:
/// typing narrows the list by label and shows the first matches, never the whole list. The list is stored in a
/// real device database as a sync stores it (one feed page applied).
struct EntitySearchTests {
    static let visit = FormDefinition(
        id: "household-visit", version: 1, title: "Visit a household", completionLabel: "Save",
        pages: [FormPage(id: "main", fields: [
            FieldDefinition(
                id: "household", kind: .singleChoice, label: "Household", required: true, choicesFrom: ChoiceSource(entityList: "households")),
            FieldDefinition(id: "members", kind: .calculate, label: "Members known", calculation: "entity('households', household, 'members')"),
        ])])

    static func id(_ number: Int) -> String { String(format: "00000000-0000-4000-8000-%012d", number) }
    static func label(_ number: Int) -> String { String(format: "Household %05d", number) }

    /// One entity feed page of `count` households (label, members, village), as the server writes one.
    static func page(count: Int) -> [UInt8] {
        var writer = JSONWriter(capacity: count * 300)
        writer.beginObject()
        writer.key("list")
        writer.string("households")
        writer.key("changes")
        writer.beginArray()
        for number in 0..<count {
            let stamp = { (value: AnswerValue) in FieldState(value: value, revision: 1, hlc: HybridTimestamp(rawValue: 1 << 20), clientID: "server") }
            let fields = RecordFields([
                "label": stamp(.text(label(number))), "members": stamp(.integer(number % 9 + 1)), "village": stamp(.text("V\(number % 100)")),
            ])
            writer.element()
            writer.beginObject()
            writer.key("entityId")
            writer.string(id(number))
            writer.key("revision")
            writer.int(1)
            writer.key("sequence")
            writer.int(number + 1)
            writer.key("creator")
            writer.string("rita")
            writer.key("fields")
            fields.write(to: &writer)
            writer.endObject()
        }
        writer.endArray()
        writer.key("removed")
        writer.beginArray()
        writer.endArray()
        writer.key("cursor")
        writer.int(count)
        writer.key("hasMore")
        writer.bool(false)
        writer.endObject()
        return writer.bytes
    }

    static func storeHouseholds(_ store: DraftStore, count: Int = 100_000) async throws {
        _ = try await store.importForms([visit])
        let applied = try await store.applyEntityPage(list: "households", page(count: count))
        #expect(applied.stored == count)
    }

    @Test func theAppNarrowsAHundredThousandEntitiesAsYouType() async throws {
        let directory = TemporaryDirectory()
        let store = try DraftStore(home: directory.url)
        try await Self.storeHouseholds(store)
        let model = AppModel(store: store, size: TerminalSize(columns: 120, rows: 40))
        await model.reload()
        try await model.startNew(formID: "household-visit")
        let opened = await model.render().plainText()
        #expect(opened.contains("Household 00000") && opened.contains("Household 00007"), "the first matches: \(opened)")
        #expect(!opened.contains("Household 00008"), "never the whole list")

        var times: [Double] = []
        for character in "household 0424" {
            let started = DispatchTime.now().uptimeNanoseconds
            _ = await model.handle(.character(character))
            times.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
        }
        let narrowed = await model.render().plainText()
        #expect(narrowed.contains("⌕ household 0424"), "the search shows: \(narrowed)")
        #expect(narrowed.contains("Household 04240") && narrowed.contains("Household 04247"))
        #expect(!narrowed.contains("Household 04248") && !narrowed.contains("Household 00000"))
        _ = await model.handle(.character("2"))
        let chosen = await model.render().plainText()
        #expect(chosen.contains("(•) Household 04242"), "the one match is the answer: \(chosen)")
        _ = await model.handle(.escape)
        let kept = await eventually(timeout: 30) {
            guard let draft = try? await store.records(state: .draft).first else { return false }
            return (try? await store.record(draft.id))?.answers["household"] == .choice(Self.id(4242))
        }
        #expect(kept, "the chosen household is the draft's answer")
        let sorted = times.sorted()
        let worst = sorted.last ?? 0
        print("type-to-search over 100,000 entities: keystroke median \(String(format: "%.1f", sorted[sorted.count / 2])) ms, worst \(String(format: "%.1f", worst)) ms")
        #expect(worst < 500, "a keystroke over 100,000 entities took \(worst) ms")
    }

    @Test func lineModeSearchesAndChoosesByNumber() async throws {
        let cli = CLIHome()
        let store = try DraftStore(home: URL(fileURLWithPath: cli.home))
        try await Self.storeHouseholds(store)
        let result = try await cli.run(["fill", "household-visit"], stdin: "Household 0424\n3\n\n")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("Type part of the name to search the list households"))
        #expect(result.output.contains("1) Household 04240") && result.output.contains("10) Household 04249"), "\(result.output)")
        #expect(!result.output.contains("Household 05000"))
        let id = try #require(CLIHome.recordID(result).flatMap(UUID.init(uuidString:)), "\(result.stdout)")
        #expect(try await store.record(id)?.answers["household"] == .choice(Self.id(4242)))
        #expect(try await store.record(id)?.state == .submitted)
    }

    @Test func aSearchThatMatchesNothingSaysSo() async throws {
        let cli = CLIHome()
        let store = try DraftStore(home: URL(fileURLWithPath: cli.home))
        try await Self.storeHouseholds(store, count: 100)
        let result = try await cli.run(["fill", "household-visit"], stdin: "nobody\nHousehold 00042\n\n")
        #expect(result.output.contains("No entity of the list households on this device has \"nobody\" in its name"), "\(result.output)")
        let id = try #require(CLIHome.recordID(result).flatMap(UUID.init(uuidString:)), "\(result.stdout)")
        #expect(try await store.record(id)?.answers["household"] == .choice(Self.id(42)))
    }
}

import DraftStore
import Foundation
import FormModel
import SyncCore

/// A device's entity list of numbered households (label, members, village), stored as a sync stores it: one
/// feed page applied. Shared by the app's type-to-search tests, in process and in tmux.
public enum HouseholdEntities {
    /// The id of household `number`.
    public static func id(_ number: Int) -> String { String(format: "00000000-0000-4000-8000-%012d", number) }
    /// The label of household `number` ("Household 04242").
    public static func label(_ number: Int) -> String { String(format: "Household %05d", number) }

    /// One entity feed page of `count` households, as the server writes one.
    public static func page(count: Int) -> [UInt8] {
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

    /// A round of visits: which households were visited, a multiple choice over the list.
    public static let round = FormDefinition(
        id: "household-round", version: 1, title: "Round of visits", completionLabel: "Save",
        pages: [FormPage(id: "main", fields: [
            FieldDefinition(
                id: "visited", kind: .multipleChoice, label: "Households visited", required: true,
                choicesFrom: ChoiceSource(entityList: "households")),
        ])])

    /// Imports `forms` and stores `count` households in `store`; returns how many the page stored.
    @discardableResult
    public static func store(_ count: Int, forms: [FormDefinition], in store: DraftStore) async throws -> Int {
        _ = try await store.importForms(forms)
        return try await store.applyEntityPage(list: "households", page(count: count)).stored
    }
}

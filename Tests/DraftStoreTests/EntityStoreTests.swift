import FieldSheetTesting
import Foundation
import FormModel
import GRDB
import SyncCore
import Testing
@testable import DraftStore

/// The device's entity lists (docs/entity-lists.md, "On the device"): a submitted record applies its entity
/// change at once; a form reads the server's entity with the device's newer changes on top, by stamp; a local
/// change leaves when the server's stamp is at least as new; observeEntities follows every commit.
struct EntityStoreTests {
    static let registration = FormDefinition(
        id: "register", version: 1, title: "Register", completionLabel: "Register",
        pages: [FormPage(id: "main", fields: [
            FieldDefinition(id: "head", kind: .text, label: "Head", saveTo: "head"),
            FieldDefinition(id: "members", kind: .integer, label: "Members", saveTo: "members"),
        ])],
        entity: EntityDeclaration(list: "households", label: "head", createIf: "members > 0"))

    /// An entity's fields as the server sends them: its label, head and members, each stamped `stamp`.
    static func fields(label: String = "Server label", members: Int, stamp: HybridTimestamp) -> RecordFields {
        RecordFields([
            "label": FieldState(value: .text(label), revision: 1, hlc: stamp, clientID: "server"),
            "head": FieldState(value: .text("Server head"), revision: 1, hlc: stamp, clientID: "server"),
            "members": FieldState(value: .integer(members), revision: 1, hlc: stamp, clientID: "server"),
        ])
    }

    /// A page of one entity whose `members` carries `stamp`.
    static func page(_ id: UUID, members: Int, stamp: HybridTimestamp, cursor: Int64, removed: [UUID] = []) -> [UInt8] {
        page(removed.isEmpty ? [(id, fields(members: members, stamp: stamp))] : [], cursor: cursor, removed: removed)
    }

    /// A page of `entities` (each with its sequence in order, up to `cursor`) and the ids in `removed`.
    static func page(_ entities: [(id: UUID, fields: RecordFields)], cursor: Int64, removed: [UUID] = []) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("list")
        writer.string("households")
        writer.key("changes")
        writer.beginArray()
        for (offset, entity) in entities.enumerated() {
            writer.element()
            writer.beginObject()
            writer.key("entityId")
            writer.string(entity.id.uuidString.lowercased())
            writer.key("revision")
            writer.int(1)
            writer.key("sequence")
            writer.int(cursor - Int64(entities.count - 1 - offset))
            writer.key("creator")
            writer.string("ana")
            writer.key("fields")
            entity.fields.write(to: &writer)
            writer.endObject()
        }
        writer.endArray()
        writer.key("removed")
        writer.beginArray()
        for gone in removed {
            writer.element()
            writer.string(gone.uuidString.lowercased())
        }
        writer.endArray()
        writer.key("cursor")
        writer.int(cursor)
        writer.key("hasMore")
        writer.bool(false)
        writer.endObject()
        return writer.bytes
    }

    func register(_ store: DraftStore, members: Int) async throws -> UUID {
        let session = try await store.newRecord(formID: "register")
        try await session.set("head", to: .text("Amina"))
        try await session.set("members", to: .integer(members))
        #expect(try await session.complete() == .submitted)
        return session.recordID
    }

    @Test func aSubmittedRecordCreatesTheEntityAndTheObservationFollows() async throws {
        let directory = TemporaryDirectory("entities")
        let store = try DraftStore(home: directory.url)
        _ = try await store.importForms([Self.registration])
        let (task, seen) = collect(store.observeEntities(list: "households"))
        defer { task.cancel() }
        #expect(await eventually { seen.count == 1 })
        #expect(seen.last == [])

        let skipped = try await register(store, members: 0)
        #expect(try await store.record(skipped)?.answers[RecordEntityChange.fieldID] == nil, "createIf does not hold: no entity change")
        let id = try await register(store, members: 4)
        #expect(await eventually { seen.last?.count == 1 }, "the new entity reaches the observation")
        let entity = try #require(seen.last?.first)
        #expect(entity.id == id && entity.row.label == "Amina" && entity.row.properties["members"] == .integer(4))
        #expect(entity.hasLocalChanges && entity.revision == 0)
        let outbox = try await store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT field_id FROM outbox WHERE record_id = ? AND kind = 'set'", arguments: [id.uuidString.lowercased()])
        }
        #expect(outbox.contains(RecordEntityChange.fieldID), "the entity change syncs as a field")
    }

    @Test func aLocalChangeStaysOnTopUntilTheServerCarriesAStampAsNew() async throws {
        let directory = TemporaryDirectory("entities")
        let store = try DraftStore(home: directory.url)
        _ = try await store.importForms([Self.registration])
        let id = try await register(store, members: 4)
        let local = try #require(try await store.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT min(hlc) FROM entity_local_changes WHERE property != ''")
        })
        // The server's entity with stamps older than every change here: the device's own values still show.
        _ = try await store.applyEntityPage(list: "households", Self.page(id, members: 9, stamp: HybridTimestamp(rawValue: local - 1), cursor: 1))
        #expect(store.entity(id.uuidString, in: "households")?.properties["members"] == .integer(4))
        #expect(store.entity(id.uuidString, in: "households")?.label == "Amina")
        let kept = try await store.entityStorageCounts(list: "households")
        #expect(kept.entities == 1 && kept.localChanges == 3, "the creation mark left; head, members and label stay: \(kept)")
        // As new: the server's value, and the local change is gone.
        _ = try await store.applyEntityPage(list: "households", Self.page(id, members: 5, stamp: HybridTimestamp(rawValue: local + (1 << 40)), cursor: 2))
        #expect(store.entity(id.uuidString, in: "households")?.properties["members"] == .integer(5))
        #expect(store.entity(id.uuidString, in: "households")?.label == "Server label")
        let settled = try await store.entityStorageCounts(list: "households")
        #expect(settled.entities == 1 && settled.localChanges == 0, "\(settled)")
        #expect(try await store.entityCursor(list: "households") == 2)
        // Removed by the server: gone from the device.
        _ = try await store.applyEntityPage(list: "households", Self.page(id, members: 5, stamp: .zero, cursor: 3, removed: [id]))
        #expect(store.entity(id.uuidString, in: "households") == nil)
        #expect(try await store.entityCursor(list: "households") == 3)
    }

    @Test func aPageThatCannotBeReadChangesNothing() async throws {
        let directory = TemporaryDirectory("entities")
        let store = try DraftStore(home: directory.url)
        let page = Self.page(UUID(), members: 1, stamp: .zero, cursor: 7)
        await #expect(throws: JSONReadError.self) {
            _ = try await store.applyEntityPage(list: "households", Array(page.prefix(page.count / 2)))
        }
        await #expect(throws: JSONReadError.self) {
            _ = try await store.applyEntityPage(list: "villages", page)
        }
        #expect(try await store.entityCursor(list: "households") == 0)
        #expect(try await store.entityStorageCounts(list: "households") == (0, 0))
    }
    /// A page of more entities than one statement stores, mixing new ones, an update, a removal and entities
    /// this device changed (one the server's stamp settles, one it does not), is applied whole: each stored as
    /// the page's bytes (sealed in an encrypted store), its label read out of them, the observation seeing the
    /// list before the page or after it, never part of it.
    @Test(arguments: [true, false])
    func aPageMixingNewUpdatedRemovedAndLocallyChangedEntitiesIsAppliedWhole(encrypted: Bool) async throws {
        let directory = TemporaryDirectory("entities")
        let store = try DraftStore(home: directory.url, options: DraftStore.Options(encryption: encrypted ? .keyFileInHome : .none))
        _ = try await store.importForms([Self.registration])
        let settled = try await register(store, members: 4)
        let kept = try await register(store, members: 6)
        let local = try #require(try await store.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT min(hlc) FROM entity_local_changes WHERE property != ''")
        })
        let old = (0..<3).map { _ in UUID() }
        let before = try await store.applyEntityPage(
            list: "households", Self.page(old.enumerated().map { ($1, Self.fields(label: "Old \($0)", members: $0, stamp: .zero)) }, cursor: 3))
        #expect(before.stored == 3 && before.removed == 0)
        let (task, seen) = collect(store.observeEntities(list: "households"))
        defer { task.cancel() }
        #expect(await eventually { seen.last?.count == 5 })

        let count = DraftStore.entityUpsertRows * 2 + 50
        let new = (0..<count).map { ($0, UUID()) }
        var entities = new.map { ($1, Self.fields(label: "Household \($0)", members: $0, stamp: .zero)) }
        entities.insert((old[0], Self.fields(label: "Renamed", members: 10, stamp: HybridTimestamp(rawValue: 5))), at: 7)
        entities.insert((settled, Self.fields(members: 5, stamp: HybridTimestamp(rawValue: local + (1 << 40)))), at: 120)
        entities.append((kept, Self.fields(members: 9, stamp: HybridTimestamp(rawValue: local - 1))))
        let applied = try await store.applyEntityPage(list: "households", Self.page(entities, cursor: 4 + Int64(entities.count), removed: [old[1]]))
        #expect(applied.stored == count + 3 && applied.removed == 1 && applied.cursor == 4 + Int64(entities.count) && !applied.hasMore)

        #expect(store.entity(old[0].uuidString, in: "households")?.label == "Renamed")
        #expect(store.entity(old[0].uuidString, in: "households")?.properties["members"] == .integer(10))
        #expect(store.entity(old[1].uuidString, in: "households") == nil, "removed")
        #expect(store.entity(old[2].uuidString, in: "households")?.label == "Old 2", "not in the page: as it was")
        let household = try #require(store.entity(new[count - 1].1.uuidString, in: "households"))
        #expect(household.label == "Household \(count - 1)" && household.properties["members"] == .integer(count - 1))
        // Settled: the server's stamp passes every change here. Kept: the device's newer values stay on top.
        #expect(store.entity(settled.uuidString, in: "households")?.label == "Server label")
        #expect(store.entity(settled.uuidString, in: "households")?.properties["members"] == .integer(5))
        #expect(store.entity(kept.uuidString, in: "households")?.label == "Amina")
        #expect(store.entity(kept.uuidString, in: "households")?.properties["members"] == .integer(6))
        let counts = try await store.entityStorageCounts(list: "households")
        #expect(counts.entities == count + 4 && counts.localChanges == 3, "kept's label, head and members wait: \(counts)")

        // Stored as the page's bytes, sealed when the store is encrypted; the label column read out of them.
        let key = new[3].1.uuidString.lowercased()
        let row = try store.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT typeof(fields), fs_open(fields, 'entity', list, id), label FROM entities WHERE list = 'households' AND id = ?", arguments: [key])
        }
        let stored = try #require(row)
        #expect(stored[0] as String == (encrypted ? "blob" : "text"))
        #expect(stored[1] as String == String(decoding: Self.fields(label: "Household 3", members: 3, stamp: .zero).jsonBytes(), as: UTF8.self))
        #expect(stored[2] as String == "Household 3")
        // The search reads the label column: the new entities are found by it, in label order.
        var found: [String] = []
        store.forEachEntity(in: "households", labelContaining: "household 24") { found.append($0.label); return found.count < 3 }
        #expect(found == ["Household 24", "Household 240", "Household 241"])

        #expect(await eventually { seen.last?.count == count + 4 }, "the page reaches the observation")
        #expect(seen.values.allSatisfy { $0.count == 5 || $0.count == count + 4 }, "never part of a page: \(seen.values.map(\.count))")
    }

    /// A search reads the label index (`entity_label_search`) when its text is rare, and walks the labels in
    /// order when it is common: either way it finds what a look at every label finds, in label order, with the
    /// device's own relabelling on top and an entity without a label searched by its id; an entity the server
    /// relabels or removes leaves the index with it.
    @Test func aSearchFindsByTheLabelIndexWhatEveryLabelHolds() async throws {
        let directory = TemporaryDirectory("entities")
        let store = try DraftStore(home: directory.url)
        try await HouseholdEntities.store(1_000, forms: [Self.registration], in: store)
        let unlabelled = try #require(UUID(uuidString: "deadbeef-0000-4000-8000-000000000001"))
        _ = try await store.applyEntityPage(list: "households", Self.page(
            [(unlabelled, RecordFields(["members": FieldState(value: .integer(2), revision: 1, hlc: .zero, clientID: "server")]))], cursor: 1_001))
        // Household 5 relabelled here, newer than the server's label.
        try await store.pool.write { db in
            try DraftStore.storeLocalChange(
                db, list: "households", entity: HouseholdEntities.id(5), property: "label", record: UUID().uuidString.lowercased(),
                value: #"{"text":"Zanzibar house"}"#, hlc: HybridTimestamp(rawValue: 1 << 30), writer: "this-device")
        }
        // What each entity shows, in the list's order: the server's labels (the entity without one, by its id,
        // first), household 5 showing the label given here where the server's stands.
        var labels = [unlabelled.uuidString.lowercased()] + (0..<1_000).map { HouseholdEntities.label($0) }
        labels[6] = "Zanzibar house"
        func search(_ text: String, limit: Int = 8) -> [String] {
            var found: [String] = []
            store.forEachEntity(in: "households", labelContaining: text) { found.append($0.label); return found.count < limit }
            return found
        }
        func everyLabel(_ text: String, limit: Int = 8) -> [String] {
            Array(labels.filter { $0.lowercased().contains(text.lowercased()) }.prefix(limit))
        }
        for text in ["household 00999", "0099", "999", "zanzibar", "ZAN", "Household 00005", "household 00", "Household", "ouse", "9", "deadbeef", "nobody", "a_b", "50%"] {
            #expect(search(text) == everyLabel(text), "\(text)")
        }
        #expect(search("household 00999") == ["Household 00999"])
        #expect(search("zanzibar") == ["Zanzibar house"])

        // The server relabels one household and removes another: the index follows.
        let renamed = try #require(UUID(uuidString: HouseholdEntities.id(998)))
        let removed = try #require(UUID(uuidString: HouseholdEntities.id(999)))
        _ = try await store.applyEntityPage(list: "households", Self.page(
            [(renamed, Self.fields(label: "Renamed 998", members: 1, stamp: .zero))], cursor: 1_002, removed: [removed]))
        #expect(search("00999").isEmpty && search("00998").isEmpty)
        #expect(search("renamed") == ["Renamed 998"])
        // FTS5's own check of an index against its content: it throws when they disagree.
        try await store.pool.write { db in
            try db.execute(sql: "INSERT INTO entity_label_search (entity_label_search) VALUES ('integrity-check')")
        }
    }
}

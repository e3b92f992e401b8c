import FieldSheetTesting
import Foundation
import FormModel
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

    /// A page of one entity whose `members` carries `stamp`.
    static func page(_ id: UUID, members: Int, stamp: HybridTimestamp, cursor: Int64, removed: [UUID] = []) -> [UInt8] {
        let fields = RecordFields([
            "label": FieldState(value: .text("Server label"), revision: 1, hlc: stamp, clientID: "server"),
            "head": FieldState(value: .text("Server head"), revision: 1, hlc: stamp, clientID: "server"),
            "members": FieldState(value: .integer(members), revision: 1, hlc: stamp, clientID: "server"),
        ])
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("list")
        writer.string("households")
        writer.key("changes")
        writer.beginArray()
        if removed.isEmpty {
            writer.element()
            writer.beginObject()
            writer.key("entityId")
            writer.string(id.uuidString.lowercased())
            writer.key("revision")
            writer.int(1)
            writer.key("sequence")
            writer.int(cursor)
            writer.key("creator")
            writer.string("ana")
            writer.key("fields")
            fields.write(to: &writer)
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
}

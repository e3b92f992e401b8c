import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import GRDB
import SyncClient
import SyncCore
import Testing

/// Entity lists end to end: two device homes, a real `fieldsheet-server` on loopback (SQLite, and PostgreSQL
/// where one is configured) and the real libcurl transport. A household registered offline is followed up on
/// the same device before any sync, reaches the other device, is updated on both, and moves between them when
/// it is reassigned (docs/entity-lists.md).
struct EntitySyncTests {
    /// Creates a household: its head's name (the label), village, members and water source.
    static let registration = FormDefinition(
        id: "household-registration", version: 1, title: "Register a household", completionLabel: "Register",
        pages: [FormPage(id: "main", fields: [
            FieldDefinition(id: "head_name", kind: .text, label: "Head of household", required: true, saveTo: "head_name"),
            FieldDefinition(id: "village", kind: .text, label: "Village", saveTo: "village"),
            FieldDefinition(id: "members", kind: .integer, label: "Members", saveTo: "members"),
        ])],
        entity: EntityDeclaration(list: "households", label: "head_name"))

    /// Visits a household chosen from the list: reads what is known of it, updates its members and water source.
    static let visit = FormDefinition(
        id: "household-visit", version: 1, title: "Visit a household", completionLabel: "Save",
        pages: [FormPage(id: "main", fields: [
            FieldDefinition(id: "village", kind: .text, label: "Village"),
            FieldDefinition(
                id: "household", kind: .singleChoice, label: "Household", required: true,
                choiceFilter: "string-length(village) == 0 || choice.village == village", choicesFrom: ChoiceSource(entityList: "households")),
            FieldDefinition(id: "known_head", kind: .calculate, label: "Head", calculation: "entity('households', household, 'label')"),
            FieldDefinition(id: "known_members", kind: .calculate, label: "Members known", calculation: "entity('households', household, 'members')"),
            FieldDefinition(id: "members", kind: .integer, label: "Members now", saveTo: "members"),
            FieldDefinition(id: "water", kind: .text, label: "Water source", saveTo: "water"),
        ])],
        entity: EntityDeclaration(list: "households", entityID: "household"))

    /// A visit of `household` on `device`, with `values`; returns what the form read of the household.
    @discardableResult
    static func visit(_ device: TestDevice, _ household: UUID, _ values: [String: AnswerValue] = [:]) async throws -> (head: AnswerValue?, members: AnswerValue?) {
        let session = try await device.store.newRecord(formID: "household-visit")
        try await session.set("household", to: .choice(household.uuidString.lowercased()))
        for (field, value) in values.sorted(by: { $0.key < $1.key }) { try await session.set(field, to: value) }
        let state = await session.state
        let read = (state.value("known_head"), state.value("known_members"))
        let result = try await session.complete()
        guard result == .submitted else { throw FixtureError("could not submit the visit: \(result)") }
        return read
    }

    /// The household as `device` holds it.
    static func household(_ device: TestDevice, _ id: UUID) -> EntityRow? {
        device.store.entity(id.uuidString, in: "households")
    }

    /// The entries of the server's conflict log of the entity (their JSON).
    static func conflictLog(_ fixture: SyncFixture, database: String?, entity: UUID) async throws -> [String] {
        let sql = "SELECT entry FROM entity_conflicts WHERE lower(CAST(entity_id AS TEXT)) = '\(entity.uuidString.lowercased())' ORDER BY id"
        if let database {
            let result = try await Subprocess.run("/usr/bin/psql", [database, "-v", "ON_ERROR_STOP=1", "-tAc", sql], timeout: 60)
            guard result.status == 0 else { throw FixtureError("psql failed: \(result.output)") }
            return result.stdout.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        }
        let queue = try DatabaseQueue(path: (fixture.server.dataDirectory as NSString).appendingPathComponent("fieldsheet.sqlite"))
        return try await queue.read { db in try String.fetchAll(db, sql: sql) }
    }

    @Test(arguments: ServerBackend.available)
    func registerFollowUpAndUpdateOnTwoDevices(backend: ServerBackend) async throws {
        try await backend.withDatabase { database in
            let fixture = try await SyncFixture(forms: [Self.registration, Self.visit], database: database)
            let a = try fixture.device(token: try await fixture.user("ana"))
            let b = try fixture.device(token: try await fixture.user("bob"))
            try await a.sync()
            try await b.sync()

            // Offline on A: register, then follow up before any sync; the visit sees the household.
            let household = try await a.fill(
                "household-registration", ["head_name": .text("Amina"), "village": .text("Kibera"), "members": .integer(4)], submit: true)
            #expect(Self.household(a, household)?.label == "Amina", "the registration applied on the device at once")
            let seen = try await Self.visit(a, household, ["water": .text("well")])
            #expect(seen.head == .text("Amina"))
            #expect(seen.members == .integer(4))
            let offered = try await a.store.newRecord(formID: "household-visit")
            #expect(await offered.state.choices(for: "household").map(\.value) == [household.uuidString.lowercased()])
            try await offered.set("village", to: .text("Mathare"))
            #expect(await offered.state.choices(for: "household").isEmpty, "the filter reads the entity's village")
            try await offered.set("household", to: .choice(UUID().uuidString.lowercased()))
            #expect(await offered.validation.issues.contains { $0.fieldID == "household" && $0.code == .notAChoice }, "an id not in the list is refused")
            try await offered.discardChanges()
            let record = try #require(try await a.store.record(household))
            let change = try RecordEntityChange(answer: try #require(record.answers[RecordEntityChange.fieldID]))
            #expect(change == RecordEntityChange(list: "households", entityID: household, action: .create, baseRevision: 0, label: "Amina"))

            // Sync: the server applies both records; B receives the household and follows up on it.
            try await a.sync()
            let afterSync = try #require(Self.household(a, household))
            #expect(afterSync.properties["water"] == .text("well"), "the server's copy now carries the visit")
            #expect(try await a.store.entityStorageCounts(list: "households").localChanges == 0, "the server sent back what the device changed")
            try await b.sync()
            let onB = try #require(Self.household(b, household), "B received the household")
            #expect(onB.label == "Amina" && onB.properties["members"] == .integer(4) && onB.properties["water"] == .text("well"))
            let seenOnB = try await Self.visit(b, household, ["water": .text("river")])
            #expect(seenOnB.head == .text("Amina"))

            // Different properties on A and B, offline: both kept, no conflict.
            try await b.sync()
            try await a.sync()
            try await Self.visit(a, household, ["members": .integer(5)])
            try await Self.visit(b, household, ["water": .text("tap")])
            try await a.sync()
            try await b.sync()
            try await a.sync()
            for device in [a, b] {
                let entity = try #require(Self.household(device, household))
                #expect(entity.properties["members"] == .integer(5) && entity.properties["water"] == .text("tap"), "\(entity)")
            }
            #expect(try await Self.conflictLog(fixture, database: database, entity: household).isEmpty)

            // The same property on both: the later write wins everywhere, the other is in the conflict log.
            try await Self.visit(a, household, ["members": .integer(7)])
            try await Self.visit(b, household, ["members": .integer(8)])  // later
            #expect(Self.household(a, household)?.properties["members"] == .integer(7), "each device reads its own change offline")
            try await a.sync()
            try await b.sync()
            try await a.sync()
            #expect(Self.household(a, household)?.properties["members"] == .integer(8))
            #expect(Self.household(b, household)?.properties["members"] == .integer(8))
            let log = try await Self.conflictLog(fixture, database: database, entity: household)
            #expect(log.count == 1, "\(log)")
            #expect(log.first?.contains(#"{"integer":7}"#) == true, "the losing value is logged: \(log)")
        }
    }

    @Test(arguments: ServerBackend.available)
    func aReassignedEntityLeavesOneDeviceAndReachesTheOther(backend: ServerBackend) async throws {
        try await backend.withDatabase { database in
            let fixture = try await SyncFixture(forms: [Self.registration, Self.visit], database: database)
            _ = try await fixture.user("rita", role: "admin")
            let a = try fixture.device(token: try await fixture.user("ana"))
            let b = try fixture.device(token: try await fixture.user("bob"))
            try await a.sync()
            let household = try await a.fill("household-registration", ["head_name": .text("Baraka"), "members": .integer(2)], submit: true)
            try await a.sync()
            let id = household.uuidString.lowercased()
            let server = fixture.server
            try await server.admin(["entities", "scope", "--project", fixture.project, "--list", "households", "assignee"])
            try await server.admin(["entities", "assign", "--project", fixture.project, "--list", "households", "--user", "rita", "--to", "ana", id])
            try await a.sync()
            try await b.sync()
            #expect(Self.household(a, household)?.label == "Baraka", "assigned to ana")
            #expect(Self.household(b, household) == nil, "not bob's")

            try await server.admin(["entities", "assign", "--project", fixture.project, "--list", "households", "--user", "rita", "--to", "bob", id])
            try await a.sync()
            try await b.sync()
            #expect(Self.household(a, household) == nil, "gone from ana's device")
            #expect(Self.household(b, household)?.label == "Baraka", "on bob's")
            #expect(try await a.store.entityStorageCounts(list: "households") == (0, 0))
        }
    }

    /// 100,000 entities of 10 properties into an empty device, through the real server and libcurl; then 10
    /// changed on the server move alone at the next sync.
    @Test func aHundredThousandEntitiesReachAnEmptyDeviceAndTenChangesMoveAlone() async throws {
        let fixture = try await SyncFixture(forms: [Self.visit])
        _ = try await fixture.user("rita", role: "admin")
        let device = try fixture.device(token: try await fixture.user("ana"))
        let count = 100_000
        let properties = (1...10).map { "p\($0)" }
        func csv(_ numbers: some Sequence<Int>, generation: Int) -> String {
            var text = "name,label," + properties.joined(separator: ",") + "\n"
            for number in numbers {
                text += String(format: "00000000-0000-4000-8000-%012d", number) + ",Household \(number),"
                text += properties.map { "\($0) of \(number) v\(generation)" }.joined(separator: ",") + "\n"
            }
            return text
        }
        let file = fixture.server.data.write("households.csv", csv(0..<count, generation: 1))
        // A debug server takes longer than an admin command's minute for 100,000 rows.
        let imported = try await Subprocess.run(fixture.server.binary, [
            "entities", "import", file, "--project", fixture.project, "--list", "households", "--user", "rita", "--max-bytes", "1000000000",
        ] + fixture.server.storageArguments, timeout: 600)
        #expect(imported.status == 0, "\(imported.output)")

        let started = Date()
        try await device.sync()
        let first = Date().timeIntervalSince(started)
        #expect(try await device.store.entityStorageCounts(list: "households").entities == count)
        let one = try #require(device.store.entity("00000000-0000-4000-8000-000000004242", in: "households"))
        #expect(one.label == "Household 4242" && one.properties["p7"] == .text("p7 of 4242 v1"))

        let changed = stride(from: 0, to: count, by: count / 10)
        let again = fixture.server.data.write("changed.csv", csv(changed, generation: 2))
        try await fixture.server.admin(["entities", "import", again, "--project", fixture.project, "--list", "households", "--user", "rita"])
        let before = try await device.store.entityCursor(list: "households")
        let restarted = Date()
        try await device.sync()
        let second = Date().timeIntervalSince(restarted)
        #expect(try await device.store.entityCursor(list: "households") > before)
        #expect(device.store.entity("00000000-0000-4000-8000-000000010000", in: "households")?.properties["p1"] == .text("p1 of 10000 v2"))
        #expect(device.store.entity("00000000-0000-4000-8000-000000010001", in: "households")?.properties["p1"] == .text("p1 of 10001 v1"))
        print("entities: 100,000 × 10 properties into an empty device in \(String(format: "%.2f", first)) s; 10 changed in \(String(format: "%.3f", second)) s (whole sync)")
    }
}

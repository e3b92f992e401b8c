import DraftStore
import Foundation
import FormModel
import Logging
import SyncClient

// What an app does with FieldSheet, on two devices (a phone and a tablet) of one collector:
// open a store, present a form, watch a list that updates by observation, sync with the server,
// show a conflict and resolve it, then register a household and visit it by choosing it from the entity
// list with type-to-search. Exits 0 when every step happened, 1 with the reason when one did not.

let arguments = CommandLine.arguments
guard arguments.count == 3, let token = ProcessInfo.processInfo.environment["FIELDSHEET_TOKEN"] else {
    FileHandle.standardError.write(Data("usage: FIELDSHEET_TOKEN=… field-notes SERVER_URL PROJECT\n".utf8))
    exit(2)
}
let configuration = SyncConfiguration(serverURL: arguments[1], project: arguments[2], token: token)
let homes = FileManager.default.temporaryDirectory.appendingPathComponent("field-notes-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: homes) }

func device(_ name: String) throws -> (DraftStore, SyncEngine) {
    let home = homes.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    let store = try DraftStore(home: home)
    var logger = Logger(label: "field-notes.\(name)")
    logger.logLevel = .warning
    return (store, SyncEngine(store: store, transport: try makeDefaultTransport(), configuration: configuration, logger: logger))
}

do {
    let (phone, phoneSync) = try device("phone")
    let (tablet, tabletSync) = try device("tablet")

    // The tablet runs the sync service, as an app would from launch.
    let service = SyncService(engine: tabletSync)
    let syncing = Task { await service.run() }
    defer { syncing.cancel() }

    // The phone fetches the project's forms, then a person fills one in a sheet.
    try await phoneSync.sync()
    let jobs = RecordListQuery(formID: "follow-up-job")
    let session = try await phone.newRecord(formID: "follow-up-job")
    _ = try await session.set("site", input: "Pump house 3")
    _ = try await session.set("technicians", input: "2")
    guard case .submitted = try await session.complete() else { throw ExampleFailure("the job was not valid") }
    let id = session.recordID
    let mine = try await firstValue(of: phone.observeRecords(jobs), within: 10, "the phone's list showing the job") {
        $0.contains { $0.id == id }
    }
    print("phone: the list shows \(mine.count) job(s), the new one \(mine.first { $0.id == id }?.syncMark.rawValue ?? "?")")

    // The phone syncs; the tablet's service hears of it from the server and its list updates by itself.
    try await phoneSync.sync()
    let seen = try await firstValue(of: tablet.observeRecords(jobs), within: 60, "the tablet's list showing the phone's job") {
        $0.contains { $0.id == id && $0.syncMark == .synced }
    }
    print("tablet: the job arrived without polling (\(seen.count) job(s) in its list)")

    // Both change the priority (a field whose conflicts a person decides) before the other's change arrives.
    let onPhone = try await phone.editSubmitted(id)
    _ = try await onPhone.set("priority", input: "low")
    guard case .submitted = try await onPhone.complete() else { throw ExampleFailure("the phone's edit was not valid") }
    let onTablet = try await tablet.editSubmitted(id)
    _ = try await onTablet.set("priority", input: "high")
    _ = try await onTablet.set("reason", input: "Basement flooding")
    guard case .submitted = try await onTablet.complete() else { throw ExampleFailure("the tablet's edit was not valid") }
    // The tablet's service sends its edit shortly after it was made.
    _ = try await firstValue(of: tablet.observeSyncStatus(), within: 60, "the tablet's edit reaching the server") {
        $0.queuedChanges == 0
    }
    try await phoneSync.sync()
    let conflicts = try await firstValue(of: phone.observeConflicts(openOnly: true), within: 10, "the phone's open conflict") {
        !$0.isEmpty
    }
    for conflict in conflicts {
        print("phone: conflict on \(conflict.fieldID): mine \(conflict.mine.map { "\($0)" } ?? "none"), theirs \(conflict.theirs.map { "\($0)" } ?? "none")")
        _ = try await phone.resolveConflict(record: conflict.recordID, field: conflict.fieldID, choice: .theirs)
    }
    try await phoneSync.sync()
    let resolved = try await phone.conflicts(openOnly: true)
    guard resolved.isEmpty else { throw ExampleFailure("\(resolved.count) conflict(s) still open after resolving") }
    print("phone: conflict resolved (kept the tablet's value); nothing waits to be sent")

    // Revisits: the phone registers a household, offline; its entity list has it at once.
    let registration = try await phone.newRecord(formID: "household-registration")
    for (field, input) in [("village", "Hill"), ("head_name", "Baraka"), ("members", "3")] {
        _ = try await registration.set(field, input: input)
    }
    guard case .submitted = try await registration.complete() else { throw ExampleFailure("the registration was not valid") }
    let households = try await firstValue(of: phone.observeEntities(list: "households"), within: 10, "the phone's households") {
        $0.contains { $0.row.label == "Baraka · Hill" }
    }
    print("phone: \(households.count) household(s) on the device, Baraka's registered offline")

    // A visit: the person types "bar" in the household field and picks the first match; the form reads
    // the household's members from the list; the visit's answer updates the household when it is submitted.
    let visit = try await phone.newRecord(formID: "household-visit")
    guard let household = await visit.entityChoices(for: "household", matching: "bar").first else {
        throw ExampleFailure("typing \"bar\" offered no household")
    }
    _ = try await visit.set("household", input: household.id)
    let members = await visit.computedValue("last_members")
    guard members?.display() == "3" else {
        throw ExampleFailure("the visit read \(members.map { "\($0)" } ?? "nothing") as the members, not 3")
    }
    _ = try await visit.set("members", input: "4")
    guard case .submitted = try await visit.complete() else { throw ExampleFailure("the visit was not valid") }
    try await phoneSync.sync()
    let visited = try await firstValue(of: tablet.observeEntities(list: "households"), within: 60, "the visit reaching the tablet") {
        $0.contains { $0.id.uuidString.lowercased() == household.id && $0.row.properties["members"]?.display() == "4" }
    }
    print("tablet: \(visited.count) household(s); \(household.label) now has 4 members")
} catch {
    FileHandle.standardError.write(Data("field-notes: \(error)\n".utf8))
    exit(1)
}

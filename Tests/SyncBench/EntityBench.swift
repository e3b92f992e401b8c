import DraftStore
import FieldSheetTesting
import Foundation
import Logging
import SyncClient

/// Entity lists on loopback: 100,000 entities of 10 properties imported on the server, pulled into an empty
/// device (the whole sync, end to end), a form whose choice lists them opened on the device, then 10 of them
/// changed on the server and the next sync timed, with the bytes each moved.
func runEntityBench(bin: String) async throws {
    let count = Int(ProcessInfo.processInfo.environment["SYNCBENCH_ENTITIES"] ?? "") ?? 100_000
    let properties = (1...10).map { "p\($0)" }
    func csv(_ numbers: some Sequence<Int>, generation: Int) -> String {
        var text = "name,label," + properties.joined(separator: ",") + "\n"
        for number in numbers {
            text += String(format: "00000000-0000-4000-8000-%012d", number) + ",Household \(number),"
            text += properties.map { "\($0) of household \(number) generation \(generation)" }.joined(separator: ",") + "\n"
        }
        return text
    }
    let server = ServerProcess(binary: "\(bin)/fieldsheet-server")
    try await server.createProject("bench")
    _ = try await server.addUser("admin", project: "bench", role: "admin")
    let token = try await server.addUser("collector", project: "bench", role: "collector")
    try await server.publish(json: """
        { "id": "visit", "version": 1, "title": "Visit", "completionLabel": "Save",
          "pages": [ { "id": "main", "fields": [
            { "id": "household", "kind": "singleChoice", "label": "Household", "choicesFrom": { "entityList": "households" } },
            { "id": "neighbours", "kind": "multipleChoice", "label": "Neighbours", "choicesFrom": { "entityList": "households" } } ] } ] }
        """, project: "bench")
    let file = server.data.write("households.csv", csv(0..<count, generation: 1))
    // Longer than an admin command's minute: 100,000 rows, and a debug build may run this too.
    let imported = try await Subprocess.run(
        server.binary, ["entities", "import", file, "--project", "bench", "--list", "households", "--user", "admin", "--max-bytes", "1000000000"]
            + server.storageArguments, timeout: 1_200)
    guard imported.status == 0 else { throw FixtureError("importing the entities failed: \(imported.output)") }
    try await server.start(port: 0)

    let home = TemporaryDirectory("syncbench-entities")
    let store = try DraftStore(home: home.url)
    var logger = Logger(label: "syncbench")
    logger.logLevel = .critical
    let transport = TimedTransport(CurlTransport())
    let engine = SyncEngine(store: store, transport: transport, configuration: SyncConfiguration(serverURL: server.url, project: "bench", token: token), logger: logger)
    var started = Date()
    try await engine.sync()
    let first = Date().timeIntervalSince(started)
    let firstBytes = transport.received
    let firstWaiting = transport.waiting
    print("entities " + String(format: "%d × 10 properties into an empty device: %.2f s end to end (the whole sync), %.2f s of it waiting for the server; %.1f MB received",
        count, first, firstWaiting, Double(firstBytes) / 1e6))

    // Opening the follow-up form whose choice lists every entity: the session, then its first screen of choices
    // (type-to-search with nothing typed), then a search typed in full; 10 times each, after one warm-up.
    var opens: [Double] = []
    var searches: [Double] = []
    for round in 0...10 {
        let opening = ContinuousClock.now
        let session = try await store.newRecord(formID: "visit")
        let shown = await session.entityChoices(for: "household", matching: "")
        let opened = ContinuousClock.now - opening
        let searching = ContinuousClock.now
        let found = await session.entityChoices(for: "household", matching: "Household \(count - 1 - round)")
        let searched = ContinuousClock.now - searching
        guard shown.count == 8, !found.isEmpty else { throw FixtureError("the entity choice offered \(shown.count) entities, the search \(found.count)") }
        try await session.dismiss(reason: .escape)
        if round > 0 {
            opens.append(Double(opened.components.attoseconds) / 1e15 + Double(opened.components.seconds) * 1000)
            searches.append(Double(searched.components.attoseconds) / 1e15 + Double(searched.components.seconds) * 1000)
        }
    }
    opens.sort()
    searches.sort()
    print("entities " + String(format: "a form whose choice lists %d entities opens (session and first 8 choices) in median %.1f ms, worst %.1f ms; a search of the whole label median %.1f ms, worst %.1f ms (10 each)",
        count, opens[opens.count / 2], opens.last ?? 0, searches[searches.count / 2], searches.last ?? 0))

    // The same for the multiple choice over the list: its first matches, then a search typed in full, with three
    // entities ticked (the sheet lists the ticked ones first and asks for as many more matches).
    var multipleOpens: [Double] = []
    var multipleSearches: [Double] = []
    for round in 0...10 {
        let opening = ContinuousClock.now
        let session = try await store.newRecord(formID: "visit")
        let shown = await session.entityChoices(for: "neighbours", matching: "")
        let opened = ContinuousClock.now - opening
        let ticked = shown.prefix(3).map(\.id)
        try await session.set("neighbours", to: .choices(ticked))
        let searching = ContinuousClock.now
        let found = await session.entityChoices(for: "neighbours", matching: "Household \(count - 1 - round)", limit: 8 + ticked.count)
        let searched = ContinuousClock.now - searching
        guard shown.count == 8, !found.isEmpty else { throw FixtureError("the multiple entity choice offered \(shown.count) entities, the search \(found.count)") }
        try await session.dismiss(reason: .escape)
        if round > 0 {
            multipleOpens.append(Double(opened.components.attoseconds) / 1e15 + Double(opened.components.seconds) * 1000)
            multipleSearches.append(Double(searched.components.attoseconds) / 1e15 + Double(searched.components.seconds) * 1000)
        }
    }
    multipleOpens.sort()
    multipleSearches.sort()
    print("entities " + String(format: "the multiple choice over %d entities: opens (session and first 8 choices) in median %.1f ms, worst %.1f ms; a search with 3 ticked median %.1f ms, worst %.1f ms (10 each)",
        count, multipleOpens[multipleOpens.count / 2], multipleOpens.last ?? 0, multipleSearches[multipleSearches.count / 2], multipleSearches.last ?? 0))

    let changed = stride(from: 0, to: count, by: max(1, count / 10)).prefix(10)
    let changes = csv(changed, generation: 2)
    let again = server.data.write("changed.csv", changes)
    try await server.admin(["entities", "import", again, "--project", "bench", "--list", "households", "--user", "admin"])
    started = Date()
    try await engine.sync()
    let second = Date().timeIntervalSince(started)
    let entityBytes = transport.received - firstBytes
    print("entities " + String(format: "10 changed on the server: next sync %.1f ms (the whole sync: forms, records, the list); %d bytes received in all (the 10 entities' CSV values: %d bytes)",
        second * 1000, entityBytes, changes.utf8.count))
    await server.stop()
}

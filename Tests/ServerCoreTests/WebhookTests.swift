import FieldSheetTesting
import Foundation
import FormModel
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SyncCore
import Testing

/// Webhooks through the real `fieldsheet-server` executable and a real receiver on loopback, on SQLite and on
/// PostgreSQL: every event of a scripted session arrives signed and in order, also across a restart; a
/// receiver that was down gets every event once it is up, in order per record; a private address is refused
/// unless the operator allows it; the admin commands' answers and refusals.
@Suite(.serialized)
struct WebhookTests {
    static let fastRetries = ["--webhook-retry-delay", "0.05", "--webhook-max-retry-delay", "0.3", "--webhook-poll-interval", "0.1"]
    static let secret = "receiver-secret-0123456789"

    static func withServer<T>(_ backend: Backend, _ body: (ServerProcess) async throws -> T) async throws -> T {
        guard backend == .postgres else {
            let server = ServerProcess()
            defer { server.kill() }
            return try await body(server)
        }
        return try await TestPostgres.withDatabase(prefix: "fieldsheet_webhooks") { url in
            let server = ServerProcess(database: url)
            defer { server.kill() }
            return try await body(server)
        }
    }

    /// A project with the job form (conflicts on it stay open for a person), a collector, a reviewer and an
    /// admin; their tokens.
    static func setUp(_ server: ServerProcess) async throws -> (ana: String, bo: String, rita: String) {
        try await server.createProject("alpha")
        let ana = try await server.addUser("ana", project: "alpha")
        let bo = try await server.addUser("bo", project: "alpha", role: "reviewer")
        let rita = try await server.addUser("rita", project: "alpha", role: "admin")
        try await server.publish(json: String(decoding: try JSONEncoder().encode(TestForms.job(policy: .manual)), as: UTF8.self), project: "alpha")
        return (ana, bo, rita)
    }

    /// One request to the server; its status and body.
    static func call(_ server: ServerProcess, _ method: HTTPRequest.Method, _ path: String, token: String, body: String) async throws -> (status: Int, body: String) {
        let request = TestClient.Request(
            path, method: method, authority: "localhost",
            headers: [.authorization: "Bearer \(token)", .contentType: "application/json"], body: ByteBuffer(string: body))
        let response = try await TestClient.withClient(host: "127.0.0.1", port: server.port, configuration: .init(timeout: .seconds(60))) { client in
            try await client.execute(request)
        }
        return (response.status.code, response.body.map { String(buffer: $0) } ?? "")
    }

    static func push(_ server: ServerProcess, token: String, device: String, _ mutations: [Mutation]) async throws -> PushResponse {
        let body = String(decoding: PushRequest(clientID: device, mutations: mutations).jsonBytes(), as: UTF8.self)
        let (status, text) = try await call(server, .post, "/v1/projects/alpha/push", token: token, body: body)
        guard status == 200 else { throw TestFailure("push answered \(status): \(text)") }
        return try PushResponse(jsonBytes: Array(text.utf8))
    }

    static func change(_ value: AnswerValue, base: Int64, millis: Int64) -> FieldChange {
        FieldChange(value: value, baseRevision: base, hlc: HybridTimestamp(millis: HybridLogicalClock.wallMillis() - 60_000 + millis, counter: 0))
    }

    static func mutation(_ record: UUID, _ changes: [String: FieldChange]) -> Mutation {
        Mutation(mutationID: UUID().uuidString, recordID: record, form: FormKey(id: "job", version: 1), state: .submitted, changes: changes)
    }

    @Test(arguments: Backend.available)
    func aReceiverGetsEveryEventOfASessionSignedAndInOrderAcrossARestart(backend: Backend) async throws {
        try await Self.withServer(backend) { server in
            let (ana, bo, rita) = try await Self.setUp(server)
            let receiver = WebhookReceiver(port: ClusterControl.freePort(), secret: Self.secret)
            try await receiver.start()
            let added = try await server.admin(["webhooks", "add", receiver.url, "--project", "alpha", "--events", "all", "--secret", Self.secret])
            #expect(added.stdout.contains("endpoint 1"), "\(added.output)")
            let listed = try await server.admin(["webhooks", "list", "--project", "alpha"])
            #expect(listed.stdout.contains(receiver.url) && !listed.stdout.contains(Self.secret), "the secret is never shown again: \(listed.output)")
            try await server.start(options: ["--webhooks-allow-private-addresses"] + Self.fastRetries)

            // Submit, edit, and an edit from a second device that meets the first's value: a conflict stays open.
            let record = UUID()
            _ = try await Self.push(server, token: ana, device: "ana-phone", [Self.mutation(record, ["title": Self.change(.text("Pump"), base: 0, millis: 1)])])
            _ = try await Self.push(server, token: ana, device: "ana-phone", [Self.mutation(record, ["notes": Self.change(.text("from ana"), base: 1, millis: 2)])])
            let conflicting = try await Self.push(server, token: bo, device: "bo-phone", [Self.mutation(record, ["notes": Self.change(.text("from bo"), base: 1, millis: 3)])])
            #expect(conflicting.outcomes.first?.conflicts.first?.open == true)
            #expect(await eventually(timeout: 60) { receiver.events.count >= 3 }, "\(receiver.events.map(\.type))")

            // The receiver goes down, a review commits meanwhile, the server restarts: the review still arrives.
            await receiver.stop()
            let reviewed = try await Self.call(server, .post, "/v1/projects/alpha/records/\(record.lowercased)/review", token: rita, body: #"{"state":"approved","comment":"ok"}"#)
            #expect(reviewed.status == 200, "\(reviewed.body)")
            await server.stop()
            try await receiver.start()
            try await server.start(port: server.port, options: ["--webhooks-allow-private-addresses"] + Self.fastRetries)
            #expect(await eventually(timeout: 60) { receiver.events.count >= 4 }, "\(receiver.events.map(\.type))")

            let conflicts = try await Self.call(server, .get, "/v1/projects/alpha/conflicts", token: rita, body: "")
            let conflictID = try #require(
                ((try JSONSerialization.jsonObject(with: Data(conflicts.body.utf8)) as? [String: Any])?["conflicts"] as? [[String: Any]])?.first?["id"] as? Int)
            let resolved = try await Self.call(server, .post, "/v1/projects/alpha/conflicts/\(conflictID)/resolve", token: rita, body: #"{"keep":"client"}"#)
            #expect(resolved.status == 200, "\(resolved.body)")
            #expect(await eventually(timeout: 60) { receiver.events.count >= 5 }, "\(receiver.events.map(\.type))")

            let events = receiver.events
            #expect(events.map(\.type) == ["record.submitted", "record.edited", "conflict.opened", "record.reviewed", "conflict.resolved"])
            try #require(events.count == 5)
            #expect(receiver.allSignaturesValid, "every delivery verifies with the endpoint's secret")
            #expect(Set(events.map(\.eventID)).count == events.count)
            for event in receiver.deliveries {
                #expect(event.json["id"] as? String == event.eventID && event.json["type"] as? String == event.type && event.json["project"] as? String == "alpha")
            }
            #expect(events[0].record["recordId"] as? String == record.lowercased && events[0].record["state"] as? String == "submitted")
            #expect(((events[1].json["changes"] as? [String: Any])?["fields"] as? [String: Any])?["notes"] != nil, "the changed fields: \(events[1].body)")
            #expect((events[2].json["conflict"] as? [String: Any])?["id"] as? Int == conflictID, "\(events[2].body)")
            #expect((events[3].record["review"] as? [String: Any])?["state"] as? String == "approved", "\(events[3].body)")
            #expect((events[4].json["conflict"] as? [String: Any])?["kept"] as? String == "client", "\(events[4].body)")
            let notes = ((events[4].record["fields"] as? [String: Any])?["values"] as? [String: Any])?["notes"]
            #expect("\(notes ?? "")".contains("from bo"), "the record as the resolution left it: \(events[4].body)")
            let revisions = events.compactMap { $0.record["revision"] as? Int }
            #expect(revisions == revisions.sorted(), "in order per record: \(revisions)")

            let log = try await server.admin(["webhooks", "deliveries", "--project", "alpha"])
            #expect(log.stdout.split(separator: "\n").count == 5 && log.stdout.contains("delivered"), "\(log.output)")
            #expect(!log.stdout.contains(Self.secret))
            await server.stop()
            await receiver.stop()
        }
    }

    @Test(arguments: Backend.available)
    func aReceiverThatWasDownGetsEveryEventInOrderOnceItIsUp(backend: Backend) async throws {
        try await Self.withServer(backend) { server in
            let (ana, _, _) = try await Self.setUp(server)
            let receiver = WebhookReceiver(port: ClusterControl.freePort(), secret: Self.secret)
            try await server.admin(["webhooks", "add", receiver.url, "--project", "alpha", "--events", "record.submitted,record.edited", "--secret", Self.secret])
            try await server.start(options: ["--webhooks-allow-private-addresses"] + Self.fastRetries)
            let records = (0..<3).map { _ in UUID() }
            for round in 0..<3 {
                for record in records {
                    var changes = ["count": Self.change(.integer(round), base: Int64(round), millis: Int64(10 + round))]
                    if round == 0 { changes["title"] = Self.change(.text("Pump"), base: 0, millis: 10) }
                    let pushed = try await Self.push(server, token: ana, device: "ana-phone", [Self.mutation(record, changes)])
                    #expect(pushed.outcomes.first?.status == .applied, "\(pushed.outcomes)")
                }
            }
            // Nothing listens: the attempts fail, are logged and retried.
            #expect(await eventually(timeout: 60) {
                let log = (try? await server.admin(["webhooks", "deliveries", "--project", "alpha"]))?.stdout ?? ""
                return log.contains("failing") && log.contains("connection failed")
            })
            try await receiver.start()
            #expect(await eventually(timeout: 90) { receiver.events.count >= 9 }, "\(receiver.events.count) of 9")
            let events = receiver.events
            #expect(events.count == 9 && receiver.allSignaturesValid)
            try #require(events.count == 9)
            for record in records {
                let mine = events.filter { $0.record["recordId"] as? String == record.lowercased }
                #expect(mine.map(\.type) == ["record.submitted", "record.edited", "record.edited"])
                let counts = mine.compactMap { (($0.record["fields"] as? [String: Any])?["values"] as? [String: Any])?["count"] }.map { "\($0)" }
                #expect(counts.count == 3, "\(counts)")
                if counts.count == 3 {
                    #expect(counts[0].contains("0") && counts[1].contains("1") && counts[2].contains("2"), "in order: \(counts)")
                }
            }
            await server.stop()
            await receiver.stop()
        }
    }

    @Test(arguments: Backend.available)
    func aPrivateAddressIsRefusedUnlessTheOperatorAllowsIt(backend: Backend) async throws {
        try await Self.withServer(backend) { server in
            let (ana, _, _) = try await Self.setUp(server)
            let receiver = WebhookReceiver(port: ClusterControl.freePort(), secret: Self.secret)
            try await receiver.start()
            try await server.admin(["webhooks", "add", receiver.url, "--project", "alpha", "--secret", Self.secret])
            try await server.start(options: Self.fastRetries)
            _ = try await Self.push(server, token: ana, device: "ana-phone", [Self.mutation(UUID(), ["title": Self.change(.text("Pump"), base: 0, millis: 1)])])
            #expect(await eventually(timeout: 60) {
                let log = (try? await server.admin(["webhooks", "deliveries", "--project", "alpha"]))?.stdout ?? ""
                return log.contains("refused to connect to 127.0.0.1") && log.contains("--webhooks-allow-private-addresses")
            })
            #expect(receiver.deliveries.isEmpty, "nothing reached the loopback receiver")
            await server.stop()
            await receiver.stop()
        }
    }

    @Test func theAdminCommandsExplainWhatTheyRefuse() async throws {
        let server = ServerProcess()
        defer { server.kill() }
        try await server.createProject("alpha")
        func run(_ arguments: [String]) async throws -> ProcessResult {
            try await Subprocess.run(server.binary, ["webhooks"] + arguments + server.storageArguments, timeout: 60)
        }
        let ftp = try await run(["add", "ftp://example.org/x", "--project", "alpha"])
        #expect(ftp.status == 64 && ftp.stderr.contains("not an http or https URL"), "\(ftp.output)")
        let events = try await run(["add", "https://example.org/x", "--project", "alpha", "--events", "record.sent"])
        #expect(events.status == 64 && events.stderr.contains("Unknown webhook event \"record.sent\"") && events.stderr.contains("record.submitted"), "\(events.output)")
        let short = try await run(["add", "https://example.org/x", "--project", "alpha", "--secret", "short"])
        #expect(short.status == 64 && short.stderr.contains("--secret must be 16 to 256 characters"), "\(short.output)")
        let added = try await run(["add", "https://example.org/x", "--project", "alpha"])
        #expect(added.status == 0, "\(added.output)")
        let secret = try #require(added.stdout.split(separator: "\n").first { $0.hasPrefix("secret ") }).dropFirst("secret ".count)
        #expect(secret.count == 64, "a random 256-bit secret: \(added.stdout)")
        let missing = try await run(["remove", "9", "--project", "alpha"])
        #expect(missing.status == 1 && missing.stderr.contains("alpha has no webhook endpoint 9"), "\(missing.output)")
        let redeliver = try await run(["redeliver", "9", "--project", "alpha"])
        #expect(redeliver.status == 1 && redeliver.stderr.contains("no webhook delivery 9"), "\(redeliver.output)")
        let badTime = try await run(["replay", "1", "--project", "alpha", "--from", "yesterday"])
        #expect(badTime.status == 64 && badTime.stderr.contains("2026-11-27T09:00:00Z"), "\(badTime.output)")
        let replayed = try await run(["replay", "1", "--project", "alpha", "--from", "2020-01-01"])
        #expect(replayed.status == 0 && replayed.stdout.contains("0 deliveries will be sent again"), "\(replayed.output)")
        let removed = try await run(["remove", "1", "--project", "alpha"])
        #expect(removed.status == 0 && removed.stdout.contains("removed endpoint 1"), "\(removed.output)")
        let help = try await run(["--help"])
        #expect(help.stdout.contains("redeliver") && help.stdout.contains("replay"), "\(help.output)")
    }
}

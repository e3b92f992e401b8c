import FieldSheetTesting
import Foundation
import SyncCore
import Testing

/// Webhook delivery when things go wrong, through the real `fieldsheet-server` executable and a real receiver on
/// loopback: a receiver down for ten minutes' worth of retries (the schedule compressed, not slept through)
/// gets every event afterwards in order per record; the server SIGKILLed 50 times while it delivers loses no
/// event and repeats one only with its own id and body; devices pushing at once get every event once and in
/// order over kept connections; two instances on one PostgreSQL database deliver each event once between them.
@Suite(.serialized)
struct WebhookReliabilityTests {
    /// One delivery log line of `webhooks deliveries`: status and attempts.
    struct LogLine {
        var kind: String
        var status: String
        var attempts: Int
    }

    static func log(_ server: ServerProcess) async throws -> [LogLine] {
        let output = try await server.admin(["webhooks", "deliveries", "--project", "alpha", "--limit", "10000"]).stdout
        return output.split(separator: "\n").compactMap { line in
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard columns.count >= 6, let attempts = Int(columns[5]) else { return nil }
            return LogLine(kind: columns[2], status: columns[4], attempts: attempts)
        }
    }

    /// The `count` field's value of a delivered record, as the body carries it.
    static func count(_ delivery: WebhookReceiver.Delivery) -> Int? {
        (((delivery.record["fields"] as? [String: Any])?["values"] as? [String: Any])?["count"] as? [String: Any])?["integer"] as? Int
    }

    /// Checks what a receiver got against the events the pushes made: each (record, revision) arrived under one
    /// event id, every repeat of an id carried the same body, each record's events first arrived in revision
    /// order, and nothing is missing. Returns how many deliveries were repeats.
    static func checkDelivered(_ receiver: WebhookReceiver, expected: [UUID: Int], sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        let deliveries = receiver.deliveries
        var bodies: [String: String] = [:]
        for delivery in deliveries {
            if let first = bodies[delivery.eventID] {
                #expect(first == delivery.body, "a repeat of event \(delivery.eventID) carries another body", sourceLocation: sourceLocation)
            } else {
                bodies[delivery.eventID] = delivery.body
            }
        }
        #expect(receiver.allSignaturesValid, sourceLocation: sourceLocation)
        let events = receiver.events
        var idsByRevision: [String: Set<String>] = [:]
        for event in events {
            let key = "\(event.record["recordId"] as? String ?? "?")@\(event.record["revision"] as? Int ?? -1)"
            idsByRevision[key, default: []].insert(event.eventID)
        }
        let splitEvents = idsByRevision.filter { $0.value.count > 1 }
        #expect(splitEvents.isEmpty, "one change reached the receiver under several event ids: \(splitEvents)", sourceLocation: sourceLocation)
        for (record, changes) in expected {
            let mine = events.filter { $0.record["recordId"] as? String == record.lowercased }
            let revisions = mine.compactMap { $0.record["revision"] as? Int }
            #expect(mine.count == changes, "record \(record.lowercased): \(mine.count) of \(changes) events", sourceLocation: sourceLocation)
            #expect(revisions == revisions.sorted(), "record \(record.lowercased) out of order: \(revisions)", sourceLocation: sourceLocation)
            #expect(mine.first?.type == "record.submitted" && mine.dropFirst().allSatisfy { $0.type == "record.edited" }, sourceLocation: sourceLocation)
        }
        #expect(events.count == expected.values.reduce(0, +), "\(events.count) events of \(expected.values.reduce(0, +))", sourceLocation: sourceLocation)
        return deliveries.count - events.count
    }

    /// The default schedule (2 s, doubling, at most an hour between attempts) compressed 200 times: 10 ms doubling
    /// to 18 s. Ten minutes of the default schedule are 3 s here, in which a failing delivery makes 8 or 9
    /// attempts, as it would in ten real minutes.
    static let compressed = 200.0
    static let compressedRetries = [
        "--webhook-retry-delay", String(2 / compressed), "--webhook-max-retry-delay", String(3600 / compressed),
        "--webhook-poll-interval", "0.05",
    ]

    @Test(arguments: Backend.available)
    func aReceiverDownForTenMinutesOfRetriesGetsEveryEventAfterwardsInOrder(backend: Backend) async throws {
        try await WebhookTests.withServer(backend) { server in
            let (ana, _, _) = try await WebhookTests.setUp(server)
            let receiver = WebhookReceiver(port: ClusterControl.freePort(), secret: WebhookTests.secret)
            try await server.admin(["webhooks", "add", receiver.url, "--project", "alpha", "--events", "record.submitted,record.edited", "--secret", WebhookTests.secret])
            try await server.start(options: ["--webhooks-allow-private-addresses"] + Self.compressedRetries)
            let down = ContinuousClock.now
            // Nothing listens: 8 records, each submitted and edited 4 times while the receiver is down.
            let records = (0..<8).map { _ in UUID() }
            for round in 0..<5 {
                for record in records {
                    var changes = ["count": WebhookTests.change(.integer(round), base: Int64(round), millis: Int64(10 + round))]
                    if round == 0 {
                        changes["title"] = WebhookTests.change(.text("Pump"), base: 0, millis: 10)
                        changes["priority"] = WebhookTests.change(.choice("high"), base: 0, millis: 10)
                    }
                    let pushed = try await WebhookTests.push(server, token: ana, device: "ana-phone", [WebhookTests.mutation(record, changes)])
                    #expect(pushed.outcomes.first?.status == .applied, "\(pushed.outcomes)")
                }
            }
            // Down for ten minutes of the default schedule: each record's first event (the only one attempted,
            // the rest wait behind it) failed at least 8 times, and 3 s (600 s / 200) went by.
            let tenMinutes = Duration.seconds(600 / Self.compressed)
            let failedLongEnough = await eventually(timeout: 120) {
                let heads = ((try? await Self.log(server)) ?? []).filter { $0.attempts >= 8 && $0.status == "failing" }
                return heads.count == records.count && ContinuousClock.now - down >= tenMinutes
            }
            let lines = try await Self.log(server)
            #expect(failedLongEnough, "\(lines.map { "\($0.status) \($0.attempts)" })")
            #expect(lines.count == 40 && lines.allSatisfy { $0.status != "delivered" }, "every event is still waiting: \(lines.count) lines")
            #expect(lines.filter { $0.attempts > 0 }.count == records.count, "only each record's first event is attempted while it fails")
            #expect(receiver.deliveries.isEmpty)

            try await receiver.start()
            #expect(await eventually(timeout: 120) { receiver.events.count >= 40 }, "\(receiver.events.count) of 40 after the receiver came back")
            _ = Self.checkDelivered(receiver, expected: Dictionary(uniqueKeysWithValues: records.map { ($0, 5) }))
            for record in records {
                let counts = receiver.events.filter { $0.record["recordId"] as? String == record.lowercased }.compactMap(Self.count)
                #expect(counts == [0, 1, 2, 3, 4], "each record's values in the order they were made: \(counts)")
            }
            // The labels came with the values, resolved when the event was written.
            let first = try #require(receiver.events.first)
            let labels = try #require(first.record["labels"] as? [String: Any], "\(first.body)")
            #expect((labels["fields"] as? [String: Any])?["priority"] as? String == "Priority", "\(first.body)")
            #expect(((labels["choices"] as? [String: Any])?["priority"] as? [String: Any])?["high"] as? String == "High", "\(first.body)")
            #expect(await eventually(timeout: 60) { ((try? await Self.log(server)) ?? []).allSatisfy { $0.status == "delivered" } })
            await server.stop()
            await receiver.stop()
        }
    }

    @Test(arguments: Backend.available)
    func killingTheServerFiftyTimesDuringDeliveriesLosesNoEventAndRepeatsOneOnlyUnderItsId(backend: Backend) async throws {
        try await WebhookTests.withServer(backend) { server in
            let (ana, _, _) = try await WebhookTests.setUp(server)
            let receiver = WebhookReceiver(port: ClusterControl.freePort(), secret: WebhookTests.secret)
            try await receiver.start()
            try await server.admin(["webhooks", "add", receiver.url, "--project", "alpha", "--events", "record.submitted,record.edited", "--secret", WebhookTests.secret])
            // Short attempts: a delivery the killed server held is taken again when its lease (timeout + 30 s) ends.
            let options = ["--webhooks-allow-private-addresses", "--webhook-timeout", "1", "--webhook-retry-delay", "0.05",
                           "--webhook-max-retry-delay", "0.5", "--webhook-poll-interval", "0.05"]
            let seed = UInt64.random(in: 1...UInt64.max)
            var random = SplitMix64(seed: seed)
            var expected: [UUID: Int] = [:]
            var records: [UUID] = []
            var kills = 0
            for round in 0..<50 {
                try await server.start(port: 0, options: options)
                // Each round submits a new record and edits two earlier ones (their events queue behind any
                // the last kill left claimed).
                var mutations = [UUID(): ["title": WebhookTests.change(.text("Pump \(round)"), base: 0, millis: 1),
                                          "count": WebhookTests.change(.integer(0), base: 0, millis: 1)]]
                for _ in 0..<min(2, records.count) {
                    let record = records[Int(random.next() % UInt64(records.count))]
                    guard mutations[record] == nil else { continue }
                    let base = Int64(expected[record] ?? 1)
                    mutations[record] = ["count": WebhookTests.change(.integer(Int(base)), base: base, millis: Int64(round + 2))]
                }
                let before = receiver.deliveries.count
                for (record, changes) in mutations {
                    let pushed = try await WebhookTests.push(server, token: ana, device: "ana-phone", [WebhookTests.mutation(record, changes)])
                    #expect(pushed.outcomes.first?.status == .applied, "round \(round) (seed \(seed)): \(pushed.outcomes)")
                    if expected[record] == nil { records.append(record) }
                    expected[record, default: 0] += 1
                }
                // Kill at once, or once the receiver got 1…3 deliveries of this round (the server may not have noted them).
                let wanted = Int(random.next() % 4)
                if wanted > 0 { _ = await eventually(timeout: 10) { receiver.deliveries.count >= before + wanted } }
                server.kill()
                kills += 1
            }
            try await server.start(port: 0, options: options)
            let total = expected.values.reduce(0, +)
            // Claims a killed server held come back after their lease (31 s here).
            #expect(await eventually(timeout: 180) { receiver.events.count >= total }, "\(receiver.events.count) of \(total) events (seed \(seed))")
            let repeats = Self.checkDelivered(receiver, expected: expected)
            #expect(kills == 50)
            print("webhook kill -9: \(kills) kills, \(total) events, \(receiver.deliveries.count) deliveries (\(repeats) repeats), 0 lost (seed \(seed))")
            await server.stop()
            await receiver.stop()
        }
    }

    /// Devices pushing at once: each push hands its new records' events to the sender as it commits, each
    /// record's edit waits for its submission to be delivered, and the deliveries share kept connections.
    @Test(arguments: Backend.available)
    func devicesPushingAtOnceGetEveryEventInOrderOverKeptConnections(backend: Backend) async throws {
        try await WebhookTests.withServer(backend) { server in
            let (ana, _, _) = try await WebhookTests.setUp(server)
            let receiver = WebhookReceiver(port: ClusterControl.freePort(), secret: WebhookTests.secret)
            try await receiver.start()
            try await server.admin(["webhooks", "add", receiver.url, "--project", "alpha", "--events", "record.submitted,record.edited", "--secret", WebhookTests.secret])
            try await server.start(options: ["--webhooks-allow-private-addresses"])
            // 10 devices at once, each submitting 10 records one push at a time and then editing each: 200 events.
            let records = (0..<10).map { _ in (0..<10).map { _ in UUID() } }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (device, mine) in records.enumerated() {
                    group.addTask {
                        for record in mine {
                            let changes = ["title": WebhookTests.change(.text("Pump"), base: 0, millis: 10), "count": WebhookTests.change(.integer(0), base: 0, millis: 10)]
                            _ = try await WebhookTests.push(server, token: ana, device: "device-\(device)", [WebhookTests.mutation(record, changes)])
                        }
                        for record in mine {
                            let changes = ["count": WebhookTests.change(.integer(1), base: 1, millis: 20)]
                            _ = try await WebhookTests.push(server, token: ana, device: "device-\(device)", [WebhookTests.mutation(record, changes)])
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(await eventually(timeout: 120) { receiver.events.count >= 200 }, "\(receiver.events.count) of 200")
            let expected = Dictionary(uniqueKeysWithValues: records.flatMap { $0 }.map { ($0, 2) })
            let repeats = Self.checkDelivered(receiver, expected: expected)
            #expect(repeats == 0, "\(repeats) events reached the receiver twice")
            // A connection per delivery under way at once (a push's, or a claimed batch's), not one per delivery.
            #expect(receiver.connections <= 50, "\(receiver.connections) connections for \(receiver.deliveries.count) deliveries")
            #expect(await eventually(timeout: 60) {
                let lines = (try? await Self.log(server)) ?? []
                return lines.count == 200 && lines.allSatisfy { $0.status == "delivered" && $0.attempts == 1 }
            }, "every delivery is noted delivered after one attempt")
            let latencies = receiver.latenciesMillis.sorted()
            if let median = latencies.dropFirst(latencies.count / 2).first, let slowest = latencies.last {
                print("webhook burst (\(backend)): \(receiver.deliveries.count) deliveries on \(receiver.connections) connections; "
                      + "commit -> receiver p50 \(median) ms, max \(slowest) ms")
            }
            await server.stop()
            await receiver.stop()
        }
    }

    @Test(.enabled(if: Backend.postgresReachable, Comment(rawValue: Backend.skipNote)))
    func twoInstancesOnOnePostgreSQLDatabaseDeliverEachEventOnceBetweenThem() async throws {
        try await TestPostgres.withDatabase(prefix: "fieldsheet_webhooks_two") { url in
            let first = ServerProcess(database: url)
            let second = ServerProcess(database: url)
            defer {
                first.kill()
                second.kill()
            }
            let (ana, _, _) = try await WebhookTests.setUp(first)
            let receiver = WebhookReceiver(port: ClusterControl.freePort(), secret: WebhookTests.secret)
            try await receiver.start()
            try await first.admin(["webhooks", "add", receiver.url, "--project", "alpha", "--events", "record.submitted,record.edited", "--secret", WebhookTests.secret])
            let options = ["--webhooks-allow-private-addresses", "--webhook-poll-interval", "0.05"]
            try await first.start(options: options)
            try await second.start(options: options)
            // 10 devices, each with 2 records submitted then edited 4 times, alternating instances: 100 events,
            // each written by one instance and wanted by both senders.
            let records = (0..<10).map { _ in (UUID(), UUID()) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (device, pair) in records.enumerated() {
                    group.addTask {
                        for round in 0..<5 {
                            for (index, record) in [pair.0, pair.1].enumerated() {
                                var changes = ["count": WebhookTests.change(.integer(round), base: Int64(round), millis: Int64(10 + round))]
                                if round == 0 { changes["title"] = WebhookTests.change(.text("Pump"), base: 0, millis: 10) }
                                let instance = (round + index) % 2 == 0 ? first : second
                                _ = try await WebhookTests.push(instance, token: ana, device: "device-\(device)", [WebhookTests.mutation(record, changes)])
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let expected = Dictionary(uniqueKeysWithValues: records.flatMap { [($0.0, 5), ($0.1, 5)] })
            #expect(await eventually(timeout: 120) { receiver.events.count >= 100 }, "\(receiver.events.count) of 100")
            // Every delivery is noted delivered after one attempt: neither instance sent one the other held.
            #expect(await eventually(timeout: 60) {
                let lines = (try? await Self.log(first)) ?? []
                return lines.count == 100 && lines.allSatisfy { $0.status == "delivered" }
            })
            let lines = try await Self.log(first)
            #expect(lines.allSatisfy { $0.attempts == 1 }, "\(lines.filter { $0.attempts != 1 }.count) deliveries attempted more than once")
            let repeats = Self.checkDelivered(receiver, expected: expected)
            #expect(repeats == 0, "\(repeats) events reached the receiver twice")
            #expect(receiver.deliveries.count == 100)
            await first.stop()
            await second.stop()
            await receiver.stop()
        }
    }
}

import Foundation
import FormModel
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// Two devices edit the same record from the same base, through the HTTP API, under every policy.
struct MergePolicyTests {
    /// Device A creates the record (revision 1), then A and B both change `notes` from base 1:
    /// A first at `aMillis`, then B at `bMillis`. Returns B's outcome, the stored record and the conflict log.
    func race(_ backend: Backend, policy: ConflictPolicy, aMillis: Int64, bMillis: Int64) async throws -> (MutationOutcome, RecordEnvelope, [LoggedConflict]) {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(policy: policy), project: "alpha")
            let reviewerToken = try await server.member("rita", project: "alpha", role: .reviewer)
            let a = Device(clientID: "device-a", token: try await server.member("ana", project: "alpha", role: .collector))
            let b = Device(clientID: "device-b", token: reviewerToken)
            let record = UUID()
            // One clock reading for both devices: their edits are ordered by `aMillis` and `bMillis` alone, however
            // long the pushes in between take on a loaded machine.
            let now = HybridLogicalClock.wallMillis()
            return try await server.app.test(.router) { client in
                _ = try await a.push(client, [a.mutation(record, ["title": a.change(.text("Pump"), now: now), "notes": a.change(.text("base"), now: now)])])
                _ = try await a.push(client, [a.mutation(record, ["notes": a.change(.text("from A"), base: 1, millis: aMillis, now: now)])])
                let (_, pushB) = try await b.push(client, [b.mutation(record, [
                    "notes": b.change(.text("from B"), base: 1, millis: bMillis, now: now), "count": b.change(.integer(7), base: 1, millis: bMillis, now: now),
                ])])
                let snapshot = try RecordEnvelope(jsonBytes: [UInt8](buffer: try await b.get(client, "/v1/projects/alpha/records/\(record)").body))
                let project = try #require(try await server.storage.project(named: "alpha"))
                return (try #require(pushB?.outcomes.first), snapshot, try await server.storage.conflicts(projectID: project.id, recordID: record))
            }
        }
    }

    @Test(arguments: Backend.available)
    func lastWriterWinsKeepsTheLaterEdit(backend: Backend) async throws {
        let (outcome, record, log) = try await race(backend, policy: .lastWriterWins, aMillis: 2_000, bMillis: 3_000)
        #expect(outcome.status == .applied)
        #expect(try record.fields["notes"]?.value == .text("from B"))
        #expect(log.map(\.entry.losingValue) == [.text("from A")])

        let (earlier, kept, log2) = try await race(backend, policy: .lastWriterWins, aMillis: 3_000, bMillis: 2_000)
        #expect(earlier.status == .merged)
        #expect(try kept.fields["notes"]?.value == .text("from A"))
        #expect(log2.map(\.entry.losingValue) == [.text("from B")])
    }

    @Test(arguments: Backend.available)
    func serverWinsKeepsTheFirstCommittedEdit(backend: Backend) async throws {
        let (outcome, record, log) = try await race(backend, policy: .serverWins, aMillis: 2_000, bMillis: 3_000)
        #expect(outcome.status == .merged)
        #expect(try record.fields["notes"]?.value == .text("from A"))
        #expect(try record.fields["count"]?.value == .integer(7), "a field only B touched is applied")
        #expect(log.count == 1)
        #expect(log.first?.entry.server?.value == .text("from A"))
        #expect(log.first?.entry.client?.value == .text("from B"))
    }

    @Test(arguments: Backend.available)
    func clientWinsTakesTheIncomingEdit(backend: Backend) async throws {
        let (outcome, record, log) = try await race(backend, policy: .clientWins, aMillis: 3_000, bMillis: 2_000)
        #expect(outcome.status == .applied)
        #expect(try record.fields["notes"]?.value == .text("from B"))
        #expect(log.first?.entry.losingValue == .text("from A"))
    }

    @Test(arguments: Backend.available)
    func manualKeepsTheServerValueAndOpensAConflict(backend: Backend) async throws {
        let (outcome, record, log) = try await race(backend, policy: .manual, aMillis: 2_000, bMillis: 3_000)
        #expect(outcome.status == .merged)
        #expect(outcome.conflicts.first?.open == true)
        #expect(try record.fields["notes"]?.value == .text("from A"))
        #expect(log.first?.entry.open == true)
    }

    @Test(arguments: Backend.available)
    func aFieldPolicyOverridesTheFormPolicy(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(policy: .serverWins, notesPolicy: .clientWins), project: "alpha")
            let a = Device(clientID: "a", token: try await server.member("ana", project: "alpha", role: .collector))
            let record = UUID()
            try await server.app.test(.router) { client in
                _ = try await a.push(client, [a.mutation(record, ["title": a.change(.text("t")), "notes": a.change(.text("n"))])])
                _ = try await a.push(client, [a.mutation(record, ["title": a.change(.text("t2"), base: 1), "notes": a.change(.text("n2"), base: 1)])])
                let (_, push) = try await Device(clientID: "b", token: a.token).push(client, [a.mutation(record, ["title": a.change(.text("t3"), base: 1), "notes": a.change(.text("n3"), base: 1)])])
                let conflicts = try #require(push?.outcomes.first?.conflicts)
                #expect(conflicts.map(\.fieldID) == ["notes", "title"])
                #expect(conflicts.map(\.winner) == [.client, .server])
            }
        }
    }

    @Test(arguments: Backend.available)
    func anEditAfterDeleteRestoresTheRecordAndLogsIt(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let a = Device(clientID: "a", token: try await server.member("ana", project: "alpha", role: .collector))
            let record = UUID()
            try await server.app.test(.router) { client in
                _ = try await a.push(client, [a.mutation(record, state: .draft, ["title": a.change(.text("t"))])])
                _ = try await a.push(client, [a.mutation(record, state: .deleted, [:])])
                let (_, push) = try await Device(clientID: "b", token: a.token).push(client, [a.mutation(record, state: .draft, ["notes": a.change(.text("late edit"), base: 1)])])
                #expect(push?.outcomes.first?.conflicts.map(\.kind) == [.restoredAfterDelete])
                let page = try await a.pull(client)
                #expect(page.changes.first?.state == .draft)
                #expect(try page.changes.first?.fields["title"]?.value == .text("t"))
                #expect(try page.changes.first?.fields["notes"]?.value == .text("late edit"))
            }
        }
    }

    @Test(arguments: Backend.available)
    func concurrentPushesFromManyDevicesToOneRecordLoseNothing(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.wide(fields: 41), project: "alpha")
            let token = try await server.member("ana", project: "alpha", role: .collector)
            let record = UUID()
            let creator = Device(clientID: "creator", token: token)
            try await server.app.test(.router) { client in
                _ = try await creator.push(client, [creator.mutation(record, state: .draft, form: "wide", ["f1": creator.change(.text("start"))])])
                // 40 devices, each writing its own field and the shared field f1, all from base 1, at once;
                // their clocks are ordered by index from one reading, whatever order their tasks start in.
                let now = HybridLogicalClock.wallMillis()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 2...41 {
                        group.addTask {
                            let device = Device(clientID: "device-\(index)", token: token)
                            let (response, push) = try await device.push(client, [device.mutation(record, state: .draft, form: "wide", [
                                "f\(index)": device.change(.text("mine \(index)"), base: 1, millis: Int64(index), now: now),
                                "f1": device.change(.text("shared \(index)"), base: 1, millis: Int64(index), now: now),
                            ])])
                            #expect(response.status == .ok)
                            #expect(push?.outcomes.first?.status != .rejected)
                        }
                    }
                    try await group.waitForAll()
                }
                let page = try await creator.pull(client)
                let stored = try #require(page.changes.first)
                for index in 2...41 { #expect(try stored.fields["f\(index)"]?.value == .text("mine \(index)")) }
                #expect(try stored.fields["f1"]?.value == .text("shared 41"), "last writer by clock wins the shared field")
                let project = try #require(try await server.storage.project(named: "alpha"))
                let log = try await server.storage.conflicts(projectID: project.id, recordID: record)
                // The first device to commit applied cleanly; each later one met a conflict on f1, and
                // every value that lost is in the log exactly once.
                #expect(log.count == 39)
                #expect(Set(log.compactMap { $0.entry.losingValue }) == Set((2...40).map { AnswerValue.text("shared \($0)") }))
            }
        }
    }
}

import FieldSheetTesting
import Foundation
import FormModel
@testable import ServerCore
import ServerSQLite
import ServerStorage
import Synchronization
import SyncCore
import Testing

/// SQLite's group commit: pushes that wait for the writer together are written in one transaction, each in
/// a savepoint, and answered only after it commits.
struct GroupCommitTests {
    /// A plan creating record `id` with one answer, and its stored outcome (a conflict id to resolve makes the
    /// write fail after the record is written: the conflict does not exist).
    static func plan(_ id: UUID, author: Int64, resolving conflict: Int64? = nil) -> PushPlan {
        let fields = RecordFields(["title": FieldState(value: .text("Pump \(id)"), revision: 1, hlc: HybridTimestamp(rawValue: 1), clientID: "d1")])
        let record = StoredRecord(
            id: id, form: FormKey(id: "job", version: 1), state: .draft, authorID: author, authorName: "ana", shared: false, revision: 1,
            sequence: 0, fields: fields)
        let outcome = MutationOutcome(mutationID: "m-\(id)", recordID: id, status: .applied, revision: 1)
        return PushPlan(
            outcomes: [outcome], newOutcomes: [StoredOutcome(mutationID: "m-\(id)", userID: author, digest: Data([1]), outcome: outcome)],
            records: [record], resolvedConflicts: conflict.map { [$0] } ?? [], appliedCount: 1)
    }

    /// Project `alpha` with the `job` form and its collector `ana` on `server`'s SQLite storage.
    static func project(on server: TestServer) async throws -> (storage: SQLiteStorage, projectID: Int64, author: Int64) {
        try await server.publish(TestForms.job(), project: "alpha")
        let author = try await server.userID(token: try await server.member("ana", project: "alpha", role: .collector))
        return (try #require(server.storage as? SQLiteStorage), try await server.project("alpha").id, author)
    }

    /// A push that holds the writer (its plan waits) until `release` is signalled; returns once it holds it.
    static func holdingTheWriter(
        _ storage: SQLiteStorage, projectID: Int64, author: Int64
    ) async throws -> (push: Task<PushPlan, any Error>, release: DispatchSemaphore) {
        let holding = HoldingFlag()
        let release = DispatchSemaphore(value: 0)
        let first = UUID()
        let push = Task {
            try await storage.push(projectID: projectID, clientID: "d1", mutationIDs: ["m-\(first)"], recordIDs: [first]) { _ in
                holding.value.withLock { $0 = true }
                release.wait()
                return Self.plan(first, author: author)
            }
        }
        try #require(await eventually(timeout: 20) { holding.value.withLock { $0 } })
        return (push, release)
    }

    @Test func pushesWaitingForTheWriterCommitTogetherAndAFailingOneLeavesNothing() async throws {
        try await TestServer.with(.sqlite) { server in
            let (storage, projectID, author) = try await Self.project(on: server)
            let before = storage.pushes.statistics

            // The first push holds the writer until the others wait for it.
            let (firstPush, release) = try await Self.holdingTheWriter(storage, projectID: projectID, author: author)
            let ids = (0..<8).map { _ in UUID() }
            let failing = ids[3]
            let pushes = ids.map { id in
                Task {
                    try await storage.push(projectID: projectID, clientID: "d\(id)", mutationIDs: ["m-\(id)"], recordIDs: [id]) { _ in
                        Self.plan(id, author: author, resolving: id == failing ? 999_999 : nil)
                    }
                }
            }
            #expect(await eventually(timeout: 20) { storage.pushes.waiting == ids.count })
            release.signal()

            #expect(try await firstPush.value.records.map(\.sequence) == [1])
            var sequences: [Int64] = []
            for (id, push) in zip(ids, pushes) {
                if id == failing {
                    await #expect(throws: StorageError.self) { try await push.value }
                    #expect(try await storage.record(projectID: projectID, id: id) == nil, "the failing push left its record")
                } else {
                    let plan = try await push.value
                    sequences += plan.records.map(\.sequence)
                    let stored = try #require(try await storage.record(projectID: projectID, id: id))
                    #expect(stored.fields["title"]?.value == .text("Pump \(id)"))
                }
            }
            // Numbered without a gap after the first push's (in the order they reached the writer, which is
            // not the order the tasks were made in).
            #expect(sequences.sorted() == Array(2...8))
            let after = storage.pushes.statistics
            #expect(after.groups - before.groups == 2)
            #expect(after.pushes - before.pushes == 9)
            #expect(after.largestGroup == 8)
            // The failing push's outcome was not stored: a retry of it is decided again.
            let snapshot = try await storage.pushSnapshot(projectID: projectID, clientID: "d\(failing)", mutationIDs: ["m-\(failing)"], recordIDs: [failing])
            #expect(snapshot.storedOutcomes.isEmpty)
        }
    }

    @Test func moreWaitingPushesThanAGroupTakesCommitInSeveralGroupsNumberedInTheWritersOrder() async throws {
        try await TestServer.with(.sqlite) { server in
            let (storage, projectID, author) = try await Self.project(on: server)
            let before = storage.pushes.statistics

            let (firstPush, release) = try await Self.holdingTheWriter(storage, projectID: projectID, author: author)
            let waiting = GroupCommit.largestGroup + 4
            let ids = (0..<waiting).map { _ in UUID() }
            let written = Written()
            let pushes = ids.map { id in
                Task {
                    try await storage.push(projectID: projectID, clientID: "d\(id)", mutationIDs: ["m-\(id)"], recordIDs: [id]) { _ in
                        written.ids.withLock { $0.append(id) }
                        return Self.plan(id, author: author)
                    }
                }
            }
            #expect(await eventually(timeout: 20) { storage.pushes.waiting == waiting })
            release.signal()

            _ = try await firstPush.value
            var sequence: [UUID: Int64] = [:]
            for (id, push) in zip(ids, pushes) { sequence[id] = try await push.value.records.first?.sequence }
            // Numbered without a gap, in the order the writer wrote them, across the groups.
            #expect(written.ids.withLock { $0 }.map { sequence[$0] ?? 0 } == Array(2...Int64(waiting + 1)))
            let after = storage.pushes.statistics
            // The holding push alone, then a full group, then the rest.
            #expect(after.groups - before.groups == 3)
            #expect(after.pushes - before.pushes == waiting + 1)
            #expect(after.largestGroup == GroupCommit.largestGroup)
        }
    }

    @Test func concurrentDevicesPushingOverHTTPAllGetTheirOutcomesAndEveryRecordOnce() async throws {
        try await TestServer.with(.sqlite) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let token = try await server.member("ana", project: "alpha", role: .collector)
            try await server.app.test(.router) { client in
                let devices = (0..<24).map { Device(clientID: "d\($0)", token: token) }
                let records = devices.map { _ in UUID() }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (device, record) in zip(devices, records) {
                        group.addTask {
                            let (response, push) = try await device.push(client, [device.mutation(record, ["title": device.change(.text("Pump"))])])
                            #expect(response.status == .ok)
                            #expect(push?.outcomes.map(\.status) == [.applied])
                        }
                    }
                    try await group.waitForAll()
                }
                let page = try await devices[0].pull(client)
                #expect(Set(page.changes.map(\.recordID)) == Set(records))
                #expect(page.changes.map(\.sequence) == Array(1...Int64(records.count)))
                // Where each push's time went, step by step.
                let metrics = try await client.execute(uri: "/metrics", method: .get).text
                for step in ["read", "snapshot", "plan", "write"] {
                    #expect(metrics.contains("fieldsheet_push_step_duration_seconds_count{step=\"\(step)\"} \(records.count)"), "\(step)")
                }
            }
        }
    }
}

/// A flag and a count shared between tasks and threads.
final class HoldingFlag: Sendable { let value = Mutex(false) }
final class Count: Sendable { let value = Mutex(0) }
/// Record ids in the order their plans ran.
final class Written: Sendable { let ids = Mutex<[UUID]>([]) }

/// The push threads: work runs at once on a free thread or a new one, and threads are kept for the next.
struct PushThreadsTests {
    @Test func itsThreadsAreNamedForTheKernel() async throws {
        #if os(Linux)
        let name = try await PushThreads(idleTimeout: 600).run { WebhookSenderTests.currentThreadName() }
        #expect(name == "fs-push")
        #endif
    }

    @Test func workThatWaitsForOtherWorkGetsAThreadOfItsOwn() async throws {
        let threads = PushThreads(idleTimeout: 600)
        // Three pieces of work that each finish only when all three have started: with fewer threads than
        // pieces this would never finish.
        let started = Count()
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    try await threads.run {
                        started.value.withLock { $0 += 1 }
                        let deadline = Date().addingTimeInterval(20)
                        while started.value.withLock({ $0 }) < 3, Date() < deadline { sched_yield() }
                        return started.value.withLock { $0 } == 3
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results == [true, true, true])
        #expect(threads.count == 3)
    }

    @Test func oneThreadServesWorkThatComesOneAfterAnother() async throws {
        let threads = PushThreads(idleTimeout: 600)
        for value in 0..<50 {
            #expect(try await threads.run { value * 2 } == value * 2)
        }
        #expect(threads.count == 1)
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await threads.run { throw Refused() } }
    }
}

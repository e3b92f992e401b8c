import Foundation
import FormModel
import HummingbirdTesting
@testable import ServerCore
@testable import ServerPostgres
import SyncCore
import Testing

/// Several server instances on one PostgreSQL database.
struct ScaleOutTests {
    /// Two instances, each with its own connection pool, take concurrent pushes from many devices while
    /// reviewers page the change feed with cursors, alternating instances. Every record is written once,
    /// so every reader must end with every record exactly once: a reader that moved its cursor past a
    /// number still in flight would miss a record, and a number handed out twice would repeat one.
    @Test(.enabled(if: Backend.postgresReachable, Comment(rawValue: Backend.skipNote)))
    func twoInstancesUnderConcurrentPushesKeepTheChangeFeedGapFree() async throws {
        let writers = 8, batches = 20, batchSize = 10, readers = 3
        try await TestServer.withStorage(.postgres) { located in
            try await located.withRunning { first in
                try await LocatedStorage(located.location).withRunning { second in
                    let a = TestServer(backend: .postgres, location: located.location, storage: first)
                    let b = TestServer(backend: .postgres, location: located.location, storage: second)
                    try await a.publish(TestForms.job(), project: "alpha")
                    var devices: [Device] = []
                    for index in 0..<writers {
                        devices.append(Device(clientID: "writer-\(index)", token: try await a.member("w\(index)", project: "alpha", role: .collector)))
                    }
                    var reviewers: [Device] = []
                    for index in 0..<readers {
                        reviewers.append(Device(clientID: "reader-\(index)", token: try await b.member("r\(index)", project: "alpha", role: .reviewer)))
                    }
                    let (pushers, pullers) = (devices, reviewers)
                    try await a.app.test(.router) { clientA in
                        try await b.app.test(.router) { clientB in
                            let instances: [any TestClientProtocol] = [clientA, clientB]
                            let (written, seen) = try await Self.hammer(instances, writers: pushers, readers: pullers, batches: batches, batchSize: batchSize)
                            #expect(written.count == writers * batches * batchSize)
                            for (reader, records) in seen.enumerated() {
                                let repeated = records.count - Set(records).count
                                let missed = written.subtracting(records).count
                                let unknown = Set(records).subtracting(written).count
                                #expect(repeated == 0, "reader \(reader) saw \(repeated) records twice")
                                #expect(missed == 0, "reader \(reader) missed \(missed) of \(written.count) records")
                                #expect(unknown == 0)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Runs the writers and readers at once; returns the records written and what each reader saw, in order.
    static func hammer(
        _ instances: [any TestClientProtocol], writers: [Device], readers: [Device], batches: Int, batchSize: Int
    ) async throws -> (Set<UUID>, [[UUID]]) {
        let done = Flag()
        let deadline = ContinuousClock.now + .seconds(60)
        return try await withThrowingTaskGroup(of: Outcome.self) { group in
            for (index, reader) in readers.enumerated() {
                group.addTask {
                    var cursor: Int64 = 0, seen: [UUID] = [], turn = index
                    while ContinuousClock.now < deadline {
                        let finished = await done.isSet
                        let instance = instances[turn % instances.count]
                        let page = try await reader.pull(instance, after: cursor, limit: 50)
                        turn += 1
                        guard page.changes.allSatisfy({ $0.sequence > cursor }) else { throw TestFailure("a page went backwards") }
                        seen += page.changes.map(\.recordID)
                        cursor = page.cursor
                        if finished && page.changes.isEmpty && !page.hasMore { return .read(index, seen) }
                    }
                    throw TestFailure("reader \(index) did not catch up before the deadline")
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { pushes in
                for (index, writer) in writers.enumerated() {
                    pushes.addTask {
                        for batch in 0..<batches {
                            let ids = (0..<batchSize).map { _ in UUID() }
                            let instance = instances[(index + batch) % instances.count]
                            let (response, push) = try await writer.push(
                                instance,
                                ids.map { writer.mutation($0, ["title": writer.change(.text("t\(batch)"))]) })
                            guard response.status == .ok, push?.outcomes.allSatisfy({ $0.status == .applied }) == true else {
                                throw TestFailure("push answered \(response.status): \(response.text)")
                            }
                            await done.add(ids)
                        }
                    }
                }
                try await pushes.waitForAll()
            }
            await done.set()
            var seen = Array(repeating: [UUID](), count: readers.count)
            for try await case .read(let index, let records) in group { seen[index] = records }
            return (await done.written, seen)
        }
    }

    enum Outcome: Sendable { case read(Int, [UUID]) }

    /// What the writers wrote, and whether they are done.
    actor Flag {
        var isSet = false
        var written = Set<UUID>()
        func set() { isSet = true }
        func add(_ ids: [UUID]) { written.formUnion(ids) }
    }

    /// Instances starting at the same moment on an empty database migrate it once.
    @Test(.enabled(if: Backend.postgresReachable, Comment(rawValue: Backend.skipNote)))
    func instancesStartingAtOnceMigrateOnce() async throws {
        try await TestServer.withStorage(.postgres) { located in
            try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await LocatedStorage(located.location).withRunning { storage in
                            try await (storage as? PostgresStorage)?.appliedMigrations() ?? []
                        }
                    }
                }
                for try await versions in group { #expect(versions == PostgresStorage.migrations.map(\.version)) }
            }
        }
    }
}

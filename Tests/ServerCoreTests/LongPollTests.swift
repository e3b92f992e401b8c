import FieldSheetTesting
import Foundation
import FormModel
import HummingbirdTesting
@testable import ServerCore
import ServerSQLite
import SyncCore
import Testing

/// `GET …/changes?wait=S` against the server on a real socket: a waiting pull answers when a change it
/// may see commits, not by polling, and otherwise with an empty page at its deadline.
struct LongPollTests {
    @Test(arguments: Backend.available)
    func aWaitingPullReturnsTheChangeAnotherDevicePushes(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let writer = Device(clientID: "phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let reviewer = Device(clientID: "desk", token: try await server.member("rita", project: "alpha", role: .reviewer))
            try await server.app.test(.live) { client in
                let port = try #require(client.port)
                let wait = 60
                let pull = Task { try await reviewer.longPoll(port: port, after: 0, wait: wait) }
                #expect(await eventually { server.storage.changes.waiting == 1 }, "the pull never started waiting")
                let record = UUID()
                let (response, _) = try await writer.push(client, [writer.mutation(record, ["title": writer.change(.text("Boiler"))])])
                #expect(response.status == .ok)
                let (page, took) = try await pull.value
                #expect(page.changes.map(\.recordID) == [record])
                #expect(page.cursor == 1)
                #expect(took < .seconds(wait), "the pull ran to its deadline instead of answering the push")
                #expect(server.storage.changes.waiting == 0)
            }
        }
    }

    @Test(arguments: Backend.available)
    func aWaitWithNothingNewEndsWithAnEmptyPage(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "phone", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                let record = UUID()
                _ = try await device.push(client, [device.mutation(record, ["title": device.change(.text("Pump"))])])
                let (page, took) = try await device.longPoll(port: try #require(client.port), after: 1, wait: 1)
                #expect(page.changes.isEmpty)
                #expect(page.cursor == 1)
                #expect(!page.hasMore)
                #expect(took >= .seconds(1))
                // Something already there is answered at once, waiting or not.
                let (first, _) = try await device.longPoll(port: try #require(client.port), after: 0, wait: 30)
                #expect(first.changes.map(\.recordID) == [record])
            }
        }
    }

    /// Another collector's draft commits while a collector waits: it is not theirs to see, so their pull
    /// goes on waiting and ends empty; their own change then ends the next wait.
    @Test(arguments: Backend.available)
    func aWaitingCollectorIsNotWokenIntoAnotherCollectorsDraft(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let ben = Device(clientID: "ben-phone", token: try await server.member("ben", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                let port = try #require(client.port)
                let pull = Task { try await ana.longPoll(port: port, after: 0, wait: 2) }
                #expect(await eventually { server.storage.changes.waiting == 1 })
                let (response, _) = try await ben.push(client, [ben.mutation(UUID(), state: .draft, ["title": ben.change(.text("Ben's"))])])
                #expect(response.status == .ok)
                // Woken by Ben's commit, the pull looks, sees nothing of Ana's, and waits again.
                let (page, took) = try await pull.value
                #expect(page.changes.isEmpty, "Ana saw another collector's draft")
                #expect(took >= .seconds(2))

                let again = Task { try await ana.longPoll(port: port, after: page.cursor, wait: 60) }
                #expect(await eventually { server.storage.changes.waiting == 1 })
                let mine = UUID()
                _ = try await ana.push(client, [ana.mutation(mine, state: .draft, ["title": ana.change(.text("Ana's"))])])
                let (next, tookNext) = try await again.value
                #expect(next.changes.map(\.recordID) == [mine])
                #expect(tookNext < .seconds(60))
            }
        }
    }

    @Test(arguments: Backend.available)
    func aClientThatLeavesReleasesItsWait(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            let device = Device(clientID: "phone", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                let leaving = TestClient(host: "127.0.0.1", port: try #require(client.port))
                leaving.connect()
                try await leaving.executeAndDontWaitForResponse(TestClient.Request(
                    "/v1/projects/alpha/changes?after=0&wait=60", method: .get, authority: "localhost", headers: device.headers, body: nil))
                #expect(await eventually { server.storage.changes.waiting == 1 })
                try await leaving.shutdown()
                #expect(await eventually { server.storage.changes.waiting == 0 }, "the server kept waiting for a client that left")
            }
        }
    }

    @Test(arguments: ["wait=61", "wait=-1", "wait=soon", "wait=1.5"])
    func aBadWaitIsRefusedWithWhatIsExpected(query: String) async throws {
        try await TestServer.with(.sqlite) { server in
            let device = Device(clientID: "phone", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                let response = try await device.get(client, "/v1/projects/alpha/changes?\(query)")
                #expect(response.status == .badRequest)
                #expect(response.problem?.field == "wait")
                #expect(response.problem?.detail == "wait must be a whole number from 0 to 60.")
            }
        }
    }

    /// Two server processes on one SQLite data directory: the instance that did not take the push learns
    /// of it from its periodic look at the counter row (see ``SQLiteStorage/changePollInterval``).
    @Test func twoSQLiteInstancesOnOneDataDirectoryWakeEachOthersPulls() async throws {
        try await TestServer.withStorage(.sqlite) { located in
            try await located.withRunning { first in
                try await LocatedStorage(located.location).withRunning { second in
                    let a = TestServer(backend: .sqlite, location: located.location, storage: first)
                    let b = TestServer(backend: .sqlite, location: located.location, storage: second)
                    try await Self.pushOnOneInstanceWakesAPullOnTheOther(a, b)
                }
            }
        }
    }

    /// Two instances on one PostgreSQL database, each with its own LISTEN connection.
    @Test(.enabled(if: Backend.postgresReachable, Comment(rawValue: Backend.skipNote)))
    func twoPostgresInstancesWakeEachOthersPulls() async throws {
        try await TestServer.withStorage(.postgres) { located in
            try await located.withRunning { first in
                try await LocatedStorage(located.location).withRunning { second in
                    let a = TestServer(backend: .postgres, location: located.location, storage: first)
                    let b = TestServer(backend: .postgres, location: located.location, storage: second)
                    try await Self.pushOnOneInstanceWakesAPullOnTheOther(a, b)
                }
            }
        }
    }

    /// The LISTEN connection is cut (as when the database restarts): the instance reconnects, and a push
    /// through the other instance then wakes its waiting pull as before.
    @Test(.enabled(if: Backend.postgresReachable, Comment(rawValue: Backend.skipNote)))
    func aPostgresInstanceWhoseListenerIsCutReconnects() async throws {
        try await TestServer.withStorage(.postgres) { located in
            guard case .postgres(let database) = located.location else { return }
            let listeners = "SELECT pid::text FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'fieldsheet-server listener'"
            @Sendable func pids() async -> Set<Substring> { Set((try? await TestDatabase.text(database, listeners).split(separator: " ")) ?? []) }
            try await located.withRunning { first in
                try await LocatedStorage(located.location).withRunning { second in
                    let a = TestServer(backend: .postgres, location: located.location, storage: first)
                    let b = TestServer(backend: .postgres, location: located.location, storage: second)
                    #expect(await pids().isEmpty, "no listener before anyone waits")
                    // B's first waiting pull starts its listener (A has none: nobody waits there).
                    try await Self.pushOnOneInstanceWakesAPullOnTheOther(a, b, rounds: 1)
                    #expect(await eventually { await pids().count == 1 })
                    let cut = await pids()
                    _ = try await TestDatabase.text(database, "SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity WHERE pid IN (\(cut.joined(separator: ",")))")
                    #expect(await eventually {
                        let now = await pids()
                        return now.count == 1 && now.isDisjoint(with: cut)
                    }, "the instance did not reconnect its listener")
                    try await Self.pushOnOneInstanceWakesAPullOnTheOther(a, b, rounds: 2, publishing: false)
                }
            }
        }
    }

    /// `rounds` times: a reviewer's pull waits on B, a collector pushes a record through A, the pull
    /// answers with it before its deadline.
    static func pushOnOneInstanceWakesAPullOnTheOther(_ a: TestServer, _ b: TestServer, rounds: Int = 3, publishing: Bool = true) async throws {
        if publishing { try await a.publish(TestForms.job(), project: "alpha") }
        let writer = Device(clientID: "phone", token: try await a.member("ana", project: "alpha", role: .collector))
        let reviewer = Device(clientID: "desk", token: try await a.member("rita", project: "alpha", role: .reviewer))
        let alpha = try await a.project("alpha")
        try await a.app.test(.router) { clientA in
            try await b.app.test(.live) { clientB in
                let port = try #require(clientB.port)
                for _ in 1...rounds {
                    let wait = 60
                    let cursor = try await a.storage.lastSequence(projectID: alpha.id)
                    let pull = Task { try await reviewer.longPoll(port: port, after: cursor, wait: wait) }
                    #expect(await eventually { b.storage.changes.waiting == 1 })
                    let record = UUID()
                    let (response, _) = try await writer.push(clientA, [writer.mutation(record, ["title": writer.change(.text("next"))])])
                    #expect(response.status == .ok)
                    let (page, took) = try await pull.value
                    #expect(page.changes.map(\.recordID) == [record])
                    #expect(took < .seconds(wait))
                }
            }
        }
    }
}

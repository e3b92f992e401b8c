import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import SyncClient
import SyncCore
import Testing

/// Faults between a device and the server: each run ends as a run without faults would — every record
/// once on the server at revision 1, one stored mutation each, no conflicts, nothing left queued.
struct SyncFaultTests {
    /// Fills `count` submitted records on `device`.
    static func fill(_ device: TestDevice, count: Int) async throws -> [UUID] {
        var ids: [UUID] = []
        for index in 0..<count {
            ids.append(try await device.fill("job", ["title": .text("Job \(index)"), "count": .integer(index)], submit: true))
        }
        return ids
    }

    /// The server holds each record once, unchanged since its first write, and nothing was applied twice.
    static func expectAppliedOnce(_ ids: [UUID], fixture: SyncFixture, token: String, mutations: Int) async throws {
        for id in ids {
            let record = try await Convergence.serverRecord(id, server: fixture, token: token)
            #expect(record?.revision == 1, "record \(id) is at revision \(record?.revision ?? -1)")
        }
        #expect(try ServerDatabase.count(fixture.server, "SELECT count(*) FROM mutations") == mutations)
        #expect(try ServerDatabase.count(fixture.server, "SELECT count(*) FROM conflicts") == 0)
    }

    @Test func connectionsCutMidRequestAndMidResponseAndStalledAreRetried() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let proxy = try FaultProxy(targetPort: fixture.server.port)
        let device = try fixture.device(token: token, url: proxy.url, retry: RetryPolicy(maxAttempts: 8, initialDelay: 0.02, maxDelay: 0.2, deadline: 30))
        device.configuration.pushBatchSize = 10
        device.transportOptions.stallTimeout = 1
        try await device.sync()
        let ids = try await Self.fill(device, count: 30)
        proxy.enqueue([.cutRequest(bytes: 40), .cutResponse(bytes: 20), .loseResponse, .stall, .cutRequest(bytes: 300), .loseResponse])
        let summary = try await device.sync()
        #expect(proxy.faultsUsed == 6)
        #expect(summary.pushed == 30)
        #expect(summary.retries >= 3)  // libcurl resends once itself when a reused connection dies before any answer
        let control = try fixture.device(token: token)
        try await control.sync()
        try await Convergence.check([device, control], server: fixture, token: token)
        try await Self.expectAppliedOnce(ids, fixture: fixture, token: token, mutations: 30)
    }

    @Test func aResponseLostAfterTheServerCommittedIsAnsweredFromTheStoredOutcome() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job(policy: .manual)])
        let token = try await fixture.user("alice")
        let proxy = try FaultProxy(targetPort: fixture.server.port)
        let device = try fixture.device(token: token, url: proxy.url, retry: RetryPolicy(maxAttempts: 2, initialDelay: 0.01, maxDelay: 0.05, deadline: 30))
        try await device.sync()
        let id = try await device.fill("job", ["title": .text("Gutter")], submit: true)
        // Every attempt of this sync loses its answer (libcurl itself resends once on a reused connection):
        // the sync fails, the mutation stays frozen.
        proxy.enqueue([.loseResponse, .loseResponse, .loseResponse, .loseResponse])
        await #expect(throws: SyncError.self) { try await device.sync() }
        #expect(proxy.faultsUsed >= 2)
        proxy.clearFaults()
        #expect(try await device.store.outboxCount() > 0)
        // Edited again before the next sync: the frozen mutation goes first, unchanged, then the new edit.
        // The same field too: edited against the device's own pushed value, which is no conflict.
        try await device.edit(id, ["notes": .text("after the lost answer"), "title": .text("Gutter, north side")])
        let summary = try await device.sync()
        #expect(summary.conflicts == 0)
        let record = try await Convergence.serverRecord(id, server: fixture, token: token)
        #expect(record?.revision == 2)
        #expect(try record?.fields["notes"]?.value == .text("after the lost answer"))
        #expect(try record?.fields["title"]?.value == .text("Gutter, north side"))
        #expect(try ServerDatabase.count(fixture.server, "SELECT count(*) FROM mutations") == 2)
        #expect(try await device.store.outboxCount() == 0)
    }

    @Test func theServerKilledDuringPushesAndRestartedTwentyTimes() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let device = try fixture.device(token: token, retry: RetryPolicy(maxAttempts: 4, initialDelay: 0.02, maxDelay: 0.1, deadline: 2))
        // One record per push: pushes go on through every kill, each one a transaction the kill can cut.
        device.configuration.pushBatchSize = 1
        try await device.sync()
        let ids = try await Self.fill(device, count: 300)
        let server = fixture.server
        let done = Flag()
        let killer = Task.detached { () -> Int in
            var kills = 0
            var random = SplitMix64(seed: UInt64(Date().timeIntervalSince1970))
            while kills < 20 {
                try? await Task.sleep(for: .microseconds(5_000 + random.next() % 40_000))
                await server.killAndWait()
                kills += 1
                try? await server.restart()
            }
            done.set()
            return kills
        }
        while !done.value {
            do { try await device.sync() } catch is SyncError {}
        }
        #expect(await killer.value >= 20)
        try await device.sync()
        #expect(try await device.store.outboxCount() == 0)
        let control = try fixture.device(token: token)
        try await control.sync()
        try await Convergence.check([device, control], server: fixture, token: token)
        try await Self.expectAppliedOnce(ids, fixture: fixture, token: token, mutations: 300)
    }
}

/// A flag set once, read from anywhere.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var isSet = false

    func set() { lock.withLock { isSet = true } }
    var value: Bool { lock.withLock { isSet } }
}

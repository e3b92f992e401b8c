import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import Logging
import SyncClient
import SyncCore
import Testing

/// `SyncEngine.waitForChanges(timeout:)` against the real server: one long-poll request with the stored
/// cursor, which reports a change waiting on the server without applying it.
struct SyncWaitTests {
    @Test func aWaitingDeviceLearnsOfAnotherDevicesPushAndItsNextSyncAppliesIt() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let (phone, tablet) = (try fixture.device(token: token), try fixture.device(token: token))
        try await phone.sync()
        try await tablet.sync()
        // The longest wait, with a stall timeout above it: a busy machine must not end it early.
        tablet.transportOptions.stallTimeout = 90
        let engine = tablet.engine
        let waiting = Task { try await engine.waitForChanges(timeout: 60) }
        let id = try await phone.fill("job", ["title": .text("Boiler")], submit: true)
        try await phone.sync()
        #expect(try await waiting.value, "the wait ended without the phone's change")
        #expect(try await tablet.values(id).isEmpty, "waiting applied the change; only a sync should")
        #expect(try await tablet.sync().pulled == 1)
        #expect(try await tablet.values(id) == ["title": .text("Boiler")])
    }

    @Test func aWaitWithNothingNewReportsFalseAfterItsTimeout() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let phone = try fixture.device(token: token)
        try await phone.sync()  // fetches the forms
        _ = try await phone.fill("job", ["title": .text("Mine")], submit: true)
        try await phone.sync()
        // Its own pushed record is already pulled back by the sync: nothing is new.
        let started = Date()
        #expect(try await phone.engine.waitForChanges(timeout: 1) == false)
        #expect(Date().timeIntervalSince(started) >= 1)
    }

    @Test func aWaitAgainstAnUnreachableServerThrowsWithoutRetrying() async throws {
        var configuration = SyncConfiguration(serverURL: "http://127.0.0.1:9", project: "field", token: "nope")
        configuration.retry = RetryPolicy(maxAttempts: 6, initialDelay: 0.01, maxDelay: 0.01, deadline: 60)
        let device = try TestDevice(configuration: configuration)
        let transport = CountingTransport(base: CurlTransport())
        let engine = SyncEngine(store: device.store, transport: transport, configuration: configuration, logger: Logger(label: "test"))
        await #expect(throws: SyncError.self) { try await engine.waitForChanges(timeout: 5) }
        #expect(transport.count == 1)
    }
}

/// Counts the requests sent through it.
final class CountingTransport: HTTPTransport, @unchecked Sendable {
    let base: any HTTPTransport
    private let lock = NSLock()
    private var sent = 0

    init(base: any HTTPTransport) { self.base = base }

    var count: Int { lock.withLock { sent } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        lock.withLock { sent += 1 }
        return try await base.send(request)
    }
}

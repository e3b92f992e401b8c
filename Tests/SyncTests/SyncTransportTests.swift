import FieldSheetTesting
import Foundation
import FormModel
import SyncClient
import SyncCore
import Testing

/// The part of the shared transport suite that needs the real fieldsheet-server: a whole sync between two
/// devices, a long-poll, and a refused token, over each transport.
struct SyncTransportTests {
    @Test(arguments: TransportKind.allCases)
    func twoDevicesSyncAndWaitOverTheTransport(_ kind: TransportKind) async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let (phone, tablet) = (try fixture.device(token: token), try fixture.device(token: token))
        phone.transport = kind
        tablet.transport = kind
        tablet.transportOptions.stallTimeout = 90
        try await phone.sync()
        try await tablet.sync()
        let engine = tablet.engine
        let waiting = Task { try await engine.waitForChanges(timeout: 60) }
        let id = try await phone.fill("job", ["title": .text("Pump"), "notes": .text(String(repeating: "é", count: 20_000))], submit: true)
        #expect(try await phone.sync().pushed == 1)
        #expect(try await waiting.value, "the long-poll did not report the phone's change")
        #expect(try await tablet.sync().pulled == 1)
        #expect(try await tablet.values(id) == ["title": .text("Pump"), "notes": .text(String(repeating: "é", count: 20_000))])
    }

    @Test(arguments: TransportKind.allCases)
    func aRefusedTokenIsUnauthorizedOverTheTransport(_ kind: TransportKind) async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let device = try fixture.device(token: "not-a-token")
        device.transport = kind
        await #expect {
            try await device.sync()
        } throws: { error in
            (error as? SyncError)?.code == .unauthorized
        }
    }
}

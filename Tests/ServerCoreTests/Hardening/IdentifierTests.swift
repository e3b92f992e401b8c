import Foundation
import FormModel
import HTTPTypes
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

/// Device-chosen identifiers are stored exactly or refused: never cut at a control character.
struct IdentifierTests {
    @Test func controlFormatAndSeparatorCharactersAreRefused() {
        for bad in ["a\u{0}b", "\u{0}", "tab\there", "line\nbreak", "del\u{7F}", "c1\u{85}", "zero\u{200B}width", "bidi\u{202E}", "sep\u{2028}", "non\u{FFFE}char"] {
            let problem = Identifier.problem(bad, field: "clientId")
            #expect(problem?.status == .badRequest, "\(bad.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(problem?.field == "clientId")
        }
        #expect(Identifier.problem("a\u{0}b", field: "clientId")?.detail.contains("U+0000 at position 2") == true)
        for good in [UUID().uuidString, "device-7", "Gerät №3", "📱", String(repeating: "x", count: 128)] {
            #expect(Identifier.problem(good, field: "clientId") == nil, "\(good)")
        }
        #expect(Identifier.problem("", field: "clientId") != nil)
        #expect(Identifier.problem(String(repeating: "x", count: 129), field: "clientId") != nil)
    }

    /// Printable ASCII is taken without reading scalar properties: every ASCII character is judged as the
    /// character rules judge it, at any place and at the length limits.
    @Test func everyASCIICharacterIsJudgedByTheCharacterRules() {
        for byte in UInt8(0)...UInt8(127) {
            let scalar = Unicode.Scalar(byte)
            for value in ["a\(Character(scalar))b", String(Character(scalar)), String(repeating: "x", count: 127) + String(Character(scalar))] {
                #expect((Identifier.problem(value, field: "mutationId") == nil) == Identifier.isAllowed(scalar), "U+\(String(byte, radix: 16))")
            }
            #expect(Identifier.problem(String(repeating: "x", count: 128) + String(Character(scalar)), field: "mutationId") != nil)
        }
    }

    /// Before the fix, "m\u{0}1" and "m\u{0}2" were both stored as "m": the second was taken for a retry
    /// of the first with another payload, and an exact retry answered 500.
    @Test(arguments: Backend.available)
    func aNulInAMutationIdOrClientIDIsRefusedAndNothingIsStored(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                let first = [device.mutation(UUID(), id: "m\u{0}1", ["title": device.change(.text("A"))])]
                let second = [device.mutation(UUID(), id: "m\u{0}2", ["title": device.change(.text("B"))])]
                for batch in [first, second, first] {
                    let (response, _) = try await device.push(client, batch)
                    #expect(response.status == .badRequest)
                    #expect(response.headers[.contentType] == "application/problem+json")
                    #expect(response.problem?.field == "mutations[0].mutationId")
                }
                var nulDevice = device
                nulDevice.clientID = "d\u{0}1"
                let (response, _) = try await nulDevice.push(client, [device.mutation(UUID(), ["title": device.change(.text("C"))])])
                #expect(response.status == .badRequest)
                #expect(response.problem?.field == "clientId")
                #expect(try await device.pull(client).changes.isEmpty)
                // A clean id still goes through, once.
                let clean = [device.mutation(UUID(), id: "m-1", ["title": device.change(.text("D"))])]
                let (_, applied) = try await device.push(client, clean)
                let (_, retried) = try await device.push(client, clean)
                #expect(applied?.outcomes.map(\.status) == [.applied])
                #expect(applied?.outcomes == retried?.outcomes)
            }
        }
    }
}

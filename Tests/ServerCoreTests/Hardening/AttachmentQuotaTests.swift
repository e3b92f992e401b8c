import Crypto
import FieldSheetTestTraits
import Foundation
import HummingbirdTesting
@testable import ServerCore
import Testing

/// One project cannot take all the server's space: with `serve --project-attachment-quota-bytes`, an upload
/// whose rest would take the project past its quota is refused at its first piece, saying which quota, what
/// the project holds and the limit; other projects are not counted.
@Suite(.measuresTiming)
struct AttachmentQuotaTests {
    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    @Test(arguments: Backend.available)
    func anUploadPastTheProjectQuotaIsRefusedWithWhatIsUsedAndTheLimit(backend: Backend) async throws {
        var limits = ServerLimits()
        limits.projectAttachmentQuotaBytes = 1_000
        try await TestServer.with(backend, limits: limits) { server in
            let ana = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            let bob = Device(clientID: "d2", token: try await server.member("bob", project: "beta", role: .collector), project: "beta")
            try await server.app.test(.router) { client in
                let first = Data((0..<600).map { UInt8($0 % 251) })
                #expect(try await ana.putAttachment(client, Self.sha256(first), first).status == .created)
                // 600 more bytes, sent as a 10-byte first piece: the whole rest counts.
                let second = Data((0..<600).map { UInt8(($0 * 7) % 253) })
                let refused = try await ana.putAttachment(client, Self.sha256(second), second, from: 0, to: 10)
                #expect(refused.status.code == 507)
                #expect(refused.headers[.uploadOffset] == "0")
                let body = String(buffer: refused.body)
                for words in ["attachment-quota-exceeded", "quota is 1000 bytes", "600 bytes of it are taken", "(600 bytes)", "--project-attachment-quota-bytes"] {
                    #expect(body.contains(words), "\(words) in: \(body)")
                }
                #expect(try await ana.headAttachment(client, Self.sha256(second)).headers[.uploadOffset] == "0", "nothing was written")
                // Up to the quota exactly is taken; another project has its own.
                let fits = Data((0..<400).map { UInt8(($0 * 3) % 241) })
                #expect(try await ana.putAttachment(client, Self.sha256(fits), fits).status == .created)
                #expect(try await bob.putAttachment(client, Self.sha256(second), second).status == .created)
            }
        }
    }

    /// With `--user-attachment-quota-bytes`, one member cannot take their project's space: what they stored
    /// first and their uploads in progress count, and a member who fills theirs with uploads they never finish
    /// neither stops another member's uploads nor slows their requests. Uploads in progress count against the
    /// project's quota too.
    @Test(arguments: Backend.available)
    func aMembersQuotaCountsTheirUploadsInProgressAndLeavesOthersAlone(backend: Backend) async throws {
        var limits = ServerLimits()
        limits.userAttachmentQuotaBytes = 100_000
        limits.projectAttachmentQuotaBytes = 1_000_000
        try await TestServer.with(backend, limits: limits) { server in
            try await server.publish(AttachmentAccessTests.form, project: "alpha")
            let mallory = Device(clientID: "mallory-phone", token: try await server.member("mallory", project: "alpha", role: .collector))
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                let port = try #require(client.port)
                let bystander = try await AttachmentMembersTests.bystander(server, client)
                let baseline = try await bystander.baseline(port: port)
                let seed = AttachmentMembersTests.seed
                let (refused, latencies) = try await bystander.timing(port: port) {
                    let stored = TestBlob(count: 60_000, seed: seed &+ 10)
                    #expect(try await mallory.putAttachment(client, stored.sha256, stored.bytes).status == .created)
                    // Uploads started and never finished: each takes its part of the quota as it arrives.
                    for index in 0..<3 {
                        let partial = TestBlob(count: 20_000, seed: seed &+ 20 &+ UInt64(index))
                        #expect(try await mallory.putAttachment(client, partial.sha256, partial.bytes, to: 10_000).status == .noContent)
                    }
                    let more = TestBlob(count: 20_000, seed: seed &+ 30)
                    return try await mallory.putAttachment(client, more.sha256, more.bytes, to: 100)
                }
                Bystander.check(latencies, baseline: baseline, during: "AttachmentQuotaTests.aMembersQuota[\(backend)]")
                #expect(refused.status.code == 507)
                let body = String(buffer: refused.body)
                for words in ["attachment-quota-exceeded", "Your attachment quota in this project is 100000 bytes", "90000 bytes of it are taken", "(20000 bytes)", "--user-attachment-quota-bytes"] {
                    #expect(body.contains(words), "\(words) in: \(body)")
                }
                // Another member's quota is their own.
                let anas = TestBlob(count: 90_000, seed: seed &+ 40)
                #expect(try await ana.putAttachment(client, anas.sha256, anas.bytes).status == .created)
                // The project's: 90,000 of Mallory's + 20,000 of Bob's + 90,000 of Ana's are taken; 800,001 more is refused.
                let big = TestBlob(count: 800_001, seed: seed &+ 50)
                let projectWide = try await ana.putAttachment(client, big.sha256, big.bytes, to: 100)
                #expect(projectWide.status.code == 507)
                #expect(String(buffer: projectWide.body).contains("200000 bytes of it are taken"), "\(String(buffer: projectWide.body))")
            }
        }
    }
}

import Crypto
import Foundation
import HummingbirdTesting
@testable import ServerCore
import Testing

/// One project cannot take all the server's space: with `serve --project-attachment-quota-bytes`, an upload
/// whose rest would take the project past its quota is refused at its first piece, saying which quota, what
/// the project holds and the limit; other projects are not counted.
struct AttachmentQuotaTests {
    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    @Test(arguments: Backend.available)
    func anUploadPastTheProjectQuotaIsRefusedWithWhatIsUsedAndTheLimit(backend: Backend) async throws {
        var limits = ServerLimits()
        limits.projectAttachmentQuotaBytes = 1_000
        try await TestServer.with(backend, limits: limits) { server in
            let ana = Device(clientId: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            let bob = Device(clientId: "d2", token: try await server.member("bob", project: "beta", role: .collector), project: "beta")
            try await server.app.test(.router) { client in
                let first = Data((0..<600).map { UInt8($0 % 251) })
                #expect(try await ana.putAttachment(client, Self.sha256(first), first).status == .created)
                // 600 more bytes, sent as a 10-byte first piece: the whole rest counts.
                let second = Data((0..<600).map { UInt8(($0 * 7) % 253) })
                let refused = try await ana.putAttachment(client, Self.sha256(second), second, from: 0, to: 10)
                #expect(refused.status.code == 507)
                #expect(refused.headers[.uploadOffset] == "0")
                let body = String(buffer: refused.body)
                for words in ["attachment-quota-exceeded", "quota is 1000 bytes", "holds 600 bytes", "(600 bytes)", "--project-attachment-quota-bytes"] {
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
}

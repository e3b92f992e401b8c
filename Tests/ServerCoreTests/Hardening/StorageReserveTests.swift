import Foundation
import HummingbirdTesting
import Logging
@testable import ServerCore
import ServerStorage
import Testing

/// The space kept for the database: with a reserve larger than the disk's free space, uploads are refused 507
/// (by what the whole upload still needs) and health answers 503 degraded; a full disk from either backend is
/// the same 507 problem for any request, never 500. (`FullDiskTests` fills a real disk under the real server.)
struct StorageReserveTests {
    @Test func aFullDiskFromEitherBackendIsA507Problem() throws {
        let logger = Logger(label: "test")
        for error: any Error in [StorageError.insufficientStorage(), AttachmentError.insufficientStorage] {
            let problem = try #require(ProblemMiddleware<AppRequestContext>.storageProblem(error, logger: logger))
            #expect(problem.status.code == 507)
            #expect(problem.type == "https://fieldsheet.dev/problems/insufficient-storage")
        }
        #expect(ProblemMiddleware<AppRequestContext>.storageProblem(CancellationError(), logger: logger) == nil)
    }

    @Test func belowTheReserveUploadsAreRefusedAndHealthIsDegraded() async throws {
        var limits = ServerLimits()
        limits.storageReserveBytes = Int64.max / 2
        try await TestServer.with(.sqlite, limits: limits) { server in
            let ana = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                let health = try await client.execute(uri: "/v1/health", method: .get)
                #expect(health.status.code == 503)
                let body = String(buffer: health.body)
                #expect(body.contains(#""status":"degraded""#) && body.contains(#""storage":"low""#), "\(body)")
                // A 10-byte first piece of a 1,000-byte upload: what counts is the 1,000 bytes.
                let refused = try await ana.putAttachment(client, String(repeating: "c", count: 64), Data(count: 10), contentRange: "bytes 0-9/1000")
                #expect(refused.status.code == 507)
                #expect(refused.headers[.contentType] == "application/problem+json")
                #expect(refused.headers[.uploadOffset] == "0")
                let detail = String(buffer: refused.body)
                #expect(detail.contains("insufficient-storage") && detail.contains("(1000 bytes)"), "\(detail)")
                #expect(try await ana.headAttachment(client, String(repeating: "c", count: 64)).headers[.uploadOffset] == "0", "nothing was written")
            }
        }
    }
}

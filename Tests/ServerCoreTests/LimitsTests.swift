import Foundation
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

struct LimitsTests {
    @Test(arguments: Backend.available)
    func aBodyOverTheLimitGets413(backend: Backend) async throws {
        var limits = ServerLimits()
        limits.maxBodyBytes = 64 * 1024
        try await TestServer.with(backend, limits: limits) { server in
            let device = Device(clientID: "d", token: try await server.member("ana", project: "alpha", role: .collector))
            let body = ByteBuffer(string: "{\"clientId\":\"d\",\"mutations\":[],\"pad\":\"" + String(repeating: "x", count: 100 * 1024) + "\"}")
            for setup in [TestingSetup.router, .live] {
                try await server.app.test(setup) { client in
                    let response = try await client.execute(uri: "/v1/projects/alpha/push", method: .post, headers: device.headers, body: body)
                    #expect(response.status == .contentTooLarge)
                    #expect(response.problem?.type == "https://fieldsheet.dev/problems/too-large")
                }
            }
        }
    }

    @Test(arguments: Backend.available)
    func aBatchOverTheLimitGets413(backend: Backend) async throws {
        var limits = ServerLimits()
        limits.maxBatchSize = 10
        try await TestServer.with(backend, limits: limits) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                let (response, _) = try await device.push(client, (0..<11).map { _ in device.mutation(UUID(), state: .draft, [:]) })
                #expect(response.status == .contentTooLarge)
                #expect(response.problem?.type == "https://fieldsheet.dev/problems/batch-too-large")
                #expect(response.problem?.field == "mutations")
                #expect(try await device.pull(client).changes.isEmpty)
            }
        }
    }

    @Test(arguments: Backend.available)
    func deeplyNestedJSONIsRefusedBeforeDecoding(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            let device = Device(clientID: "d", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                let body = ByteBuffer(string: "{\"clientId\":\"d\",\"mutations\":" + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}")
                let response = try await client.execute(uri: "/v1/projects/alpha/push", method: .post, headers: device.headers, body: body)
                #expect(response.status == .badRequest)
                #expect(response.problem?.type == "https://fieldsheet.dev/problems/too-deep")
            }
        }
        #expect(JSONDepthLimit.depth(of: Array("{\"a\":[1,{\"b\":\"[[[\"}]}".utf8), stoppingAfter: 10) == 3)
    }

    @Test(arguments: Backend.available)
    func malformedJSONIsABadRequestProblem(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            let device = Device(clientID: "d", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                for body in ["{", "{\"clientId\":\"d\"}", "{\"clientId\":5,\"mutations\":[]}", "[]"] {
                    let response = try await client.execute(uri: "/v1/projects/alpha/push", method: .post, headers: device.headers, body: ByteBuffer(string: body))
                    #expect(response.status == .badRequest, "\(body)")
                    #expect(response.headers[.contentType] == "application/problem+json")
                    #expect(!response.text.contains("SQL"))
                }
                let missing = try await client.execute(uri: "/v1/projects/alpha/push", method: .post, headers: device.headers, body: ByteBuffer(string: "{\"clientId\":\"d\"}"))
                #expect(missing.problem?.field == "mutations")
                let badLimit = try await device.get(client, "/v1/projects/alpha/changes?limit=0")
                #expect(badLimit.status == .badRequest)
                #expect(badLimit.problem?.field == "limit")
            }
        }
    }

    @Test(arguments: Backend.available)
    func repeatedFailedAuthenticationIsThrottledButAValidTokenStillWorks(backend: Backend) async throws {
        var limits = ServerLimits()
        limits.authFailureLimit = 3
        try await TestServer.with(backend, limits: limits) { server in
            let token = try await server.member("ana", project: "alpha", role: .collector)
            try await server.app.test(.live) { client in
                for _ in 0..<3 {
                    let response = try await client.execute(uri: "/v1/projects/alpha/forms", method: .get, headers: [.authorization: "Bearer fst_guess"])
                    #expect(response.status == .unauthorized)
                }
                let blocked = try await client.execute(uri: "/v1/projects/alpha/forms", method: .get, headers: [.authorization: "Bearer fst_guess"])
                #expect(blocked.status == .tooManyRequests)
                #expect(Int(blocked.headers[.retryAfter] ?? "") ?? 0 >= 1)
                #expect(blocked.problem?.type == "https://fieldsheet.dev/problems/too-many-failed-authentications")
                let valid = try await client.execute(uri: "/v1/projects/alpha/forms", method: .get, headers: [.authorization: "Bearer \(token)"])
                #expect(valid.status == .ok)
            }
        }
    }
}

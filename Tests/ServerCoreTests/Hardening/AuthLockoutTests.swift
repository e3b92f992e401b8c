import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import ServerCore
import Testing

/// Many people share one address behind a site's NAT or a load balancer: wrong tokens from it are
/// throttled, valid ones never refused, and forwarding headers count only from named proxies.
struct AuthLockoutTests {
    static let forms = "/v1/projects/alpha/forms"

    func wrong(_ forwardedFor: String? = nil) -> HTTPFields {
        var headers: HTTPFields = [.authorization: "Bearer fst_revoked-\(UUID().uuidString)"]
        if let forwardedFor { headers[HTTPField.Name("X-Forwarded-For")!] = forwardedFor }
        return headers
    }

    @Test(arguments: Backend.available)
    func aValidTokenIsAcceptedAfterManyWrongOnesFromTheSameAddress(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            let token = try await server.member("ana", project: "alpha", role: .collector)
            try await server.app.test(.live) { client in
                var statuses: [HTTPResponse.Status] = []
                for _ in 0..<25 { statuses.append(try await client.execute(uri: Self.forms, method: .get, headers: wrong()).status) }
                #expect(statuses.prefix(20).allSatisfy { $0 == .unauthorized })
                #expect(statuses.suffix(5).allSatisfy { $0 == .tooManyRequests })
                for _ in 0..<3 {
                    let valid = try await client.execute(uri: Self.forms, method: .get, headers: [.authorization: "Bearer \(token)"])
                    #expect(valid.status == .ok)
                }
                let stillThrottled = try await client.execute(uri: Self.forms, method: .get, headers: wrong())
                #expect(stillThrottled.status == .tooManyRequests)
                #expect(stillThrottled.problem?.detail.contains("A valid token is accepted at any time") == true)
            }
        }
    }

    @Test func aForgedForwardedForFromAnUntrustedPeerIsIgnored() async throws {
        try await TestServer.with(.sqlite) { server in
            _ = try await server.member("ana", project: "alpha", role: .collector)
            try await server.app.test(.live) { client in
                // A new made-up client address on every request does not escape the count of the real peer.
                var statuses: [HTTPResponse.Status] = []
                for index in 0..<22 {
                    statuses.append(try await client.execute(uri: Self.forms, method: .get, headers: wrong("198.51.100.\(index)")).status)
                }
                #expect(statuses.prefix(20).allSatisfy { $0 == .unauthorized })
                #expect(statuses.suffix(2).allSatisfy { $0 == .tooManyRequests })
            }
        }
    }

    @Test func behindATrustedProxyEachClientIsCountedOnItsOwn() async throws {
        let proxies = TrustedProxies([try IPAddressRange(cidr: "127.0.0.0/8")])
        try await TestServer.with(.sqlite, trustedProxies: proxies) { server in
            let token = try await server.member("ana", project: "alpha", role: .collector)
            try await server.app.test(.live) { client in
                // The proxy appends the address it saw; what the client put before it is not read.
                var statuses: [HTTPResponse.Status] = []
                for index in 0..<21 {
                    statuses.append(try await client.execute(uri: Self.forms, method: .get, headers: wrong("10.9.9.\(index), 203.0.113.5")).status)
                }
                #expect(statuses.prefix(20).allSatisfy { $0 == .unauthorized })
                #expect(statuses.last == .tooManyRequests)
                // Another client behind the same proxy is not affected, and a valid token from the first still works.
                #expect(try await client.execute(uri: Self.forms, method: .get, headers: wrong("203.0.113.6")).status == .unauthorized)
                var valid: HTTPFields = [.authorization: "Bearer \(token)"]
                valid[HTTPField.Name("X-Forwarded-For")!] = "203.0.113.5"
                #expect(try await client.execute(uri: Self.forms, method: .get, headers: valid).status == .ok)
            }
        }
    }
}

import FieldSheetTesting
import Foundation
import Testing

/// `serve`'s network options on the real binary: refused when they make no sense, honoured when they do.
struct ServeOptionsTests {
    @Test(arguments: [
        (["--trusted-proxy", "10.0.0.0/33"], "prefix length"),
        (["--trusted-proxy", "proxy.example.org"], "not an IP address or CIDR block"),
        (["--header-timeout", "0"], "--header-timeout"),
        (["--idle-timeout", "-5"], "--idle-timeout"),
        (["--max-connections", "0"], "--max-connections"),
        (["--max-record-instances", "0"], "--max-record-instances must be at least 1"),
        (["--max-value-bytes", "0"], "--max-value-bytes must be at least 1"),
        (["--storage-reserve-bytes=-1"], "--storage-reserve-bytes must be 0 or more"),
        (["--project-attachment-quota-bytes=-1"], "--project-attachment-quota-bytes must be 0 or more"),
        (["--user-attachment-quota-bytes=-1"], "--user-attachment-quota-bytes must be 0 or more"),
        (["--max-held-polls-per-token", "0"], "--max-held-polls-per-token must be at least 1"),
        (["--max-held-polls-per-device", "0"], "--max-held-polls-per-device must be at least 1"),
        (["--max-held-polls", "0"], "--max-held-polls must be at least 1"),
        (["--held-poll-retry-after", "0"], "--held-poll-retry-after must be a number of seconds from 1 to 3600"),
    ])
    func nonsensicalOptionsAreRefusedBeforeStarting(options: [String], message: String) async throws {
        let data = TemporaryDirectory("serve-options")
        let result = try await Subprocess.run(
            PackagePaths.debugProduct("fieldsheet-server"), ["serve", "--data", data.file("data"), "--port", "0"] + options, timeout: 30)
        #expect(result.status == 64, "\(result.output)")
        #expect(result.stderr.contains(message), "\(result.output)")
    }

    /// The held-poll caps and the attachment quotas are in `serve --help`.
    @Test func theHeldPollCapsAndQuotasAreInTheHelp() async throws {
        let result = try await Subprocess.run(PackagePaths.debugProduct("fieldsheet-server"), ["serve", "--help"], timeout: 30)
        for option in ["--max-held-polls-per-token", "--max-held-polls-per-device", "--max-held-polls ", "--held-poll-retry-after", "--user-attachment-quota-bytes", "--project-attachment-quota-bytes"] {
            #expect(result.stdout.contains(option), "\(option) in: \(result.output)")
        }
    }

    @Test func behindANamedProxyWrongTokensCountPerClientAndAValidTokenAlwaysPasses() async throws {
        let server = ServerProcess()
        try await server.createProject("alpha")
        let token = try await server.addUser("ana", project: "alpha")
        try await server.start(options: ["--trusted-proxy", "127.0.0.1", "--trusted-proxy", "10.0.0.0/8"])
        defer { server.kill() }
        let connection = try RawConnection(port: server.port)
        func status(token: String, forwardedFor: String) async -> Int? {
            connection.clearReceived()
            connection.send("GET /v1/projects/alpha/forms HTTP/1.1\r\nHost: fieldsheet\r\nAuthorization: Bearer \(token)\r\nX-Forwarded-For: \(forwardedFor)\r\n\r\n")
            return await connection.readResponse(timeout: 10)?.status
        }
        var wrong: [Int?] = []
        for _ in 0..<21 { wrong.append(await status(token: "fst_revoked", forwardedFor: "203.0.113.5, 10.1.2.3")) }
        #expect(wrong.prefix(20).allSatisfy { $0 == 401 })
        #expect(wrong.last == 429)
        #expect(await status(token: "fst_revoked", forwardedFor: "203.0.113.6") == 401, "another client behind the same proxy")
        #expect(await status(token: token, forwardedFor: "203.0.113.5") == 200, "a valid token from the throttled client")
    }
}

import FieldSheetTesting
import Foundation
import Testing

/// Client faults in a request's framing, sent over raw sockets to the real `fieldsheet-server`: each is
/// answered 4xx (never 5xx), and a connection whose body will not be read is closed after the answer.
@Suite(.serialized)
struct HTTPFramingTests {
    final class Fixture: Sendable {
        let server = ServerProcess()
        let token: String

        init() async throws {
            try await server.createProject("alpha")
            token = try await server.addUser("ana", project: "alpha")
            try await server.start(options: ["--max-body-bytes", "2000", "--body-timeout", "3", "--header-timeout", "30"])
        }

        deinit { server.kill() }

        func pushHead(_ framing: String, authorized: Bool = true) -> String {
            "POST /v1/projects/alpha/push HTTP/1.1\r\nHost: fieldsheet\r\n" + (authorized ? "Authorization: Bearer \(token)\r\n" : "")
                + "Content-Type: application/json\r\n\(framing)\r\n\r\n"
        }

        /// Sends `request`, reads the answer, and tells whether the server then closed the connection.
        func exchange(_ parts: [String], shutdownAfter: Bool = false) async throws -> (RawResponse?, closed: Bool) {
            let connection = try RawConnection(port: server.port)
            for part in parts { connection.send(part) }
            if shutdownAfter { connection.shutdownWrite() }
            let response = await connection.readResponse(timeout: 20)
            return await (response, connection.readUntilClosed(timeout: 20))
        }

        /// The server still answers a normal request.
        func stillServes() async throws -> Bool {
            let connection = try RawConnection(port: server.port)
            connection.send("GET /v1/health HTTP/1.1\r\nHost: fieldsheet\r\n\r\n")
            return await connection.readResponse(timeout: 10)?.status == 200
        }
    }

    static func chunk(_ size: Int) -> String { String(size, radix: 16) + "\r\n" + String(repeating: " ", count: size) + "\r\n" }

    @Test func aChunkedBodyOverTheLimitIs413AndTheConnectionCloses() async throws {
        let fixture = try await Fixture()
        let (response, closed) = try await fixture.exchange([fixture.pushHead("Transfer-Encoding: chunked"), Self.chunk(1000), Self.chunk(1000), Self.chunk(1000)])
        #expect(response?.status == 413)
        #expect(response?.headers["content-type"] == "application/problem+json")
        #expect(response?.headers["connection"] == "close")
        #expect(closed)
        #expect(try await fixture.stillServes())
    }

    @Test func aContentLengthOverTheLimitIsAnsweredBeforeTheBodyAndTheConnectionCloses() async throws {
        let fixture = try await Fixture()
        let (response, closed) = try await fixture.exchange([fixture.pushHead("Content-Length: 1000000")])
        #expect(response?.status == 413)
        #expect(response?.headers["connection"] == "close")
        #expect(closed, "an early 413 must not leave the connection open")
        // The same for any answer given before the body was read (here: no token).
        let (unauthorized, closedToo) = try await fixture.exchange([fixture.pushHead("Content-Length: 1500", authorized: false), "{"])
        #expect(unauthorized?.status == 401)
        #expect(unauthorized?.headers["connection"] == "close")
        #expect(closedToo)
        #expect(try await fixture.stillServes())
    }

    @Test func aBodyShorterThanItsContentLengthIs400WhenTheClientStopsSending() async throws {
        let fixture = try await Fixture()
        let (response, closed) = try await fixture.exchange([fixture.pushHead("Content-Length: 500"), #"{"clientId":"d1","mutations":[]}"#], shutdownAfter: true)
        #expect(response?.status == 400)
        #expect(response?.headers["content-type"] == "application/problem+json")
        #expect(response?.body.contains("malformed-http") == true)
        #expect(closed)
        #expect(try await fixture.stillServes())
    }

    @Test func aBodyShorterThanItsContentLengthIsCutOffByTheBodyTimeout() async throws {
        let fixture = try await Fixture()
        let connection = try RawConnection(port: fixture.server.port)
        connection.send(fixture.pushHead("Content-Length: 500") + #"{"clientId":"d1","mutations":[]}"#)
        #expect(await connection.readUntilClosed(timeout: 30))
        #expect(!String(decoding: connection.received, as: UTF8.self).contains("HTTP/1.1 5"))
        #expect(try await fixture.stillServes())
    }

    @Test(arguments: ["zz\r\nabc\r\n0\r\n\r\n", "3\r\nabcdef\r\n0\r\n\r\n", "-1\r\nabc\r\n0\r\n\r\n", "3\r\nabc0\r\n\r\n"])
    func malformedChunkFramingIs400AndTheConnectionCloses(body: String) async throws {
        let fixture = try await Fixture()
        let (response, closed) = try await fixture.exchange([fixture.pushHead("Transfer-Encoding: chunked"), body])
        #expect(response?.status == 400, "\(body.debugDescription): \(response.map { "\($0.status) \($0.body)" } ?? "no answer")")
        #expect(closed)
        #expect(try await fixture.stillServes())
    }
}

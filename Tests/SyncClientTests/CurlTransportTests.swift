import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Testing
@testable import SyncClient

/// The libcurl transport against a real HTTP server on a loopback port.
struct CurlTransportTests {
    /// Runs `body` with the base URL of a small Hummingbird server that echoes, serves large bodies and stalls.
    func withServer(_ body: @Sendable (String) async throws -> Void) async throws {
        let router = Router()
        router.post("/echo") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 16 << 20)
            var headers = HTTPFields()
            headers[.contentType] = "application/octet-stream"
            if let encoding = request.headers[.acceptEncoding] { headers[HTTPField.Name("X-Seen-Accept-Encoding")!] = encoding }
            if let custom = request.headers[HTTPField.Name("X-Custom")!] { headers[HTTPField.Name("X-Custom")!] = custom }
            return Response(status: .created, headers: headers, body: .init(byteBuffer: bytes))
        }
        router.get("/big") { _, _ -> Response in
            Response(status: .ok, body: .init(byteBuffer: ByteBuffer(repeating: 0x61, count: 2 << 20)))
        }
        router.get("/stall") { _, _ -> Response in
            // Answer headers, then send nothing more: a stalled transfer.
            Response(status: .ok, body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: "partial"))
                try await Task.sleep(for: .seconds(30))
                try await writer.finish(nil)
            })
        }
        let port = PortBox()
        var quiet = Logger(label: "transport-test-server")
        quiet.logLevel = .critical  // stopping the server mid-stall is expected, not worth a log line
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), onServerRunning: { channel in
            port.set(channel.localAddress?.port ?? 0)
        }, logger: quiet)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            let bound = try await port.wait()
            try await body("http://127.0.0.1:\(bound)")
            group.cancelAll()
        }
    }

    @Test func sendsAndReceivesBodiesAndHeaders() async throws {
        try await withServer { base in
            let transport = CurlTransport()
            let payload = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
            let response = try await transport.send(TransportRequest(method: "POST", url: base + "/echo", headers: ["X-Custom": "yes"], body: payload))
            #expect(response.status == 201)
            #expect(response.body == payload)
            #expect(response.headers["x-custom"] == "yes")
            #expect(response.headers["x-seen-accept-encoding"]?.contains("gzip") == true, "compressed responses are accepted")
        }
    }

    @Test func reusesOneConnectionAcrossRequests() async throws {
        try await withServer { base in
            let transport = CurlTransport()
            for _ in 0..<5 {
                let response = try await transport.send(TransportRequest(method: "GET", url: base + "/big"))
                #expect(response.body.count == 2 << 20)
            }
            #expect(transport.connectionsOpened == 1)
        }
    }

    @Test func aStalledTransferFailsAfterTheStallTimeout() async throws {
        try await withServer { base in
            var options = CurlTransportOptions()
            options.stallTimeout = 1
            let transport = CurlTransport(options: options)
            let started = Date()
            await #expect {
                _ = try await transport.send(TransportRequest(method: "GET", url: base + "/stall"))
            } throws: { error in
                (error as? TransportError)?.kind == .stalled
            }
            #expect(Date().timeIntervalSince(started) < 25, "far sooner than the 30 s the server would keep it open")
        }
    }

    @Test func nothingListeningIsCannotConnect() async throws {
        // Port 9 (discard) has no listener on this loopback.
        let transport = CurlTransport()
        await #expect {
            _ = try await transport.send(TransportRequest(method: "GET", url: "http://127.0.0.1:9/health"))
        } throws: { error in
            guard let error = error as? TransportError else { return false }
            return error.kind == .cannotConnect && error.description.contains("Check the address")
        }
    }

    @Test func tlsToAServerThatDoesNotSpeakItFailsAsTLS() async throws {
        try await withServer { base in
            let transport = CurlTransport()
            #expect(CurlTransportOptions().verifyTLS)
            await #expect {
                _ = try await transport.send(TransportRequest(method: "GET", url: base.replacingOccurrences(of: "http:", with: "https:") + "/big"))
            } throws: { error in
                (error as? TransportError)?.kind == .tls
            }
        }
    }
}

/// Hands the server's bound port from its start-up callback to the test.
final class PortBox: @unchecked Sendable {
    private let lock = NSLock()
    private var port: Int?

    func set(_ value: Int) {
        lock.withLock { port = value }
    }

    /// Polls for the port with a deadline.
    func wait(timeout: TimeInterval = 60) async throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let port = lock.withLock({ port }) { return port }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw CancellationError()
    }
}

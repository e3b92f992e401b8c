import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Testing
import FieldSheetTesting
@testable import SyncClient

/// Both HTTP transports, libcurl and URLSession, against a real HTTP server on a loopback port: one suite
/// that each must pass, so the sync engine meets the same behaviour over either.
struct TransportTests {
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
        router.get("/redirect") { _, _ -> Response in
            Response(status: .found, headers: [.location: "/big"])
        }
        router.head("/big") { _, _ -> Response in
            Response(status: .ok, headers: [HTTPField.Name("X-Size")!: "\(2 << 20)"])
        }
        router.get("/slow") { _, _ -> Response in
            try await Task.sleep(for: .seconds(1))
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "late")))
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

    @Test(arguments: TransportKind.allCases)
    func sendsAndReceivesBodiesAndHeaders(_ kind: TransportKind) async throws {
        try await withServer { base in
            let transport = try kind.make()
            let payload = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
            let response = try await transport.send(TransportRequest(method: "POST", url: base + "/echo", headers: ["X-Custom": "yes"], body: payload))
            #expect(response.status == 201)
            #expect(response.body == payload)
            #expect(response.headers["x-custom"] == "yes")
            #expect(response.headers["x-seen-accept-encoding"]?.contains("gzip") == true, "compressed responses are accepted")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func headAndRedirectAreReturnedAsTheyCame(_ kind: TransportKind) async throws {
        try await withServer { base in
            let transport = try kind.make()
            let head = try await transport.send(TransportRequest(method: "HEAD", url: base + "/big"))
            #expect(head.status == 200)
            #expect(head.headers["x-size"] == "\(2 << 20)")
            #expect(head.body.isEmpty)
            let redirect = try await transport.send(TransportRequest(method: "GET", url: base + "/redirect"))
            #expect(redirect.status == 302, "a redirect is the caller's to follow, not the transport's")
            #expect(redirect.headers["location"] == "/big")
            let missing = try await transport.send(TransportRequest(method: "GET", url: base + "/nothing-here"))
            #expect(missing.status == 404, "an error status is a response, not a transport failure")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anIndependentTransportIsNotHeldUpByALongRequest(_ kind: TransportKind) async throws {
        try await withServer { base in
            let transport = try kind.make()
            let other = transport.independent()
            async let slow = transport.send(TransportRequest(method: "GET", url: base + "/slow"))
            // The quick request finishes while the slow one is still held by the server.
            let quick = try await other.send(TransportRequest(method: "GET", url: base + "/big"))
            #expect(quick.body.count == 2 << 20)
            let late = try await slow
            #expect(late.body == Data("late".utf8))
        }
    }

    @Test func curlReusesOneConnectionAcrossRequests() async throws {
        try await withServer { base in
            let transport = CurlTransport()
            for _ in 0..<5 {
                let response = try await transport.send(TransportRequest(method: "GET", url: base + "/big"))
                #expect(response.body.count == 2 << 20)
            }
            #expect(transport.connectionsOpened == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStalledTransferFailsAfterTheStallTimeout(_ kind: TransportKind) async throws {
        try await withServer { base in
            var options = TransportOptions()
            options.stallTimeout = 1
            let transport = try kind.make(options)
            let started = Date()
            await #expect {
                _ = try await transport.send(TransportRequest(method: "GET", url: base + "/stall"))
            } throws: { error in
                (error as? TransportError)?.kind == .stalled
            }
            #expect(Date().timeIntervalSince(started) < 25, "far sooner than the 30 s the server would keep it open")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func nothingListeningIsCannotConnect(_ kind: TransportKind) async throws {
        // Port 9 (discard) has no listener on this loopback.
        let transport = try kind.make()
        await #expect {
            _ = try await transport.send(TransportRequest(method: "GET", url: "http://127.0.0.1:9/health"))
        } throws: { error in
            guard let error = error as? TransportError else { return false }
            return error.kind == .cannotConnect && error.description.contains("Check the address")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func tlsToAServerThatDoesNotSpeakItFailsAsTLS(_ kind: TransportKind) async throws {
        try await withServer { base in
            let transport = try kind.make()
            #expect(TransportOptions().verifyTLS)
            await #expect {
                _ = try await transport.send(TransportRequest(method: "GET", url: base.replacingOccurrences(of: "http:", with: "https:") + "/big"))
            } throws: { error in
                (error as? TransportError)?.kind == .tls
            }
        }
    }
}

/// What URLSession cannot honour is refused when the transport is made, saying what to do instead.
@Test func urlSessionRefusesOptionsItCannotHonour() throws {
    var unverified = TransportOptions()
    unverified.verifyTLS = false
    #expect {
        _ = try URLSessionTransport(options: unverified)
    } throws: { error in
        (error as? TransportSetupError)?.description.contains("cannot turn verification off") == true
    }
    var privateCA = TransportOptions()
    privateCA.caFile = "/etc/fieldsheet/ca.pem"
    #expect {
        _ = try URLSessionTransport(options: privateCA)
    } throws: { error in
        (error as? TransportSetupError)?.description.contains("/etc/fieldsheet/ca.pem") == true
    }
    #expect(try makeDefaultTransport() is CurlTransport, "libcurl is the default where it is built in")
}

/// Hands the server's bound port from its start-up callback to the test.
final class PortBox: @unchecked Sendable {
    private let lock = NSLock()
    private var port: Int?

    func set(_ value: Int) {
        lock.withLock { port = value }
    }

    /// Polls for the port with a deadline (``eventually``).
    func wait(timeout: TimeInterval = 60) async throws -> Int {
        var bound: Int?
        _ = await eventually(timeout: timeout) {
            bound = lock.withLock { port }
            return bound != nil
        }
        guard let bound else { throw CancellationError() }
        return bound
    }
}

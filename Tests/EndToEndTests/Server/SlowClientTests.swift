import FieldSheetTesting
import Foundation
import Testing

/// Hundreds of connections that send nothing, trickle a header or a body, or idle after a request, against
/// the real `fieldsheet-server` on loopback: a normal request is answered while they are open, and each is
/// closed once its timeout has passed; the connection cap holds and frees up as connections close.
@Suite(.serialized)
struct SlowClientTests {
    static let health = "GET /v1/health HTTP/1.1\r\nHost: fieldsheet\r\n\r\n"

    /// Sends one more byte to each connection every quarter second, until stopped.
    final class Trickler: @unchecked Sendable {
        private let lock = NSLock()
        private var stopped = false

        init(_ connections: [RawConnection], byte: String) {
            Thread.detachNewThread { [self] in
                while !lock.withLock({ stopped }) {
                    for connection in connections { connection.send(byte) }
                    Thread.sleep(forTimeInterval: 0.25)
                }
            }
        }

        func stop() { lock.withLock { stopped = true } }
    }

    @Test func slowAndIdleConnectionsAreClosedAfterTheirTimeoutsWhileANormalRequestSucceeds() async throws {
        let server = ServerProcess()
        try await server.createProject("alpha")
        let token = try await server.addUser("ana", project: "alpha")
        let timeout = 10
        try await server.start(options: ["--header-timeout", "\(timeout)", "--body-timeout", "\(timeout)", "--idle-timeout", "\(timeout)"])
        defer { server.kill() }

        let silent = try (0..<200).map { _ in try RawConnection(port: server.port) }
        let headerTrickle = try (0..<100).map { _ in try RawConnection(port: server.port) }
        for connection in headerTrickle { connection.send("GET /v1/health HTTP/1.1\r\nHost: fieldsheet\r\nX-Slow: ") }
        let bodyTrickle = try (0..<100).map { _ in try RawConnection(port: server.port) }
        for connection in bodyTrickle {
            connection.send("POST /v1/projects/alpha/push HTTP/1.1\r\nHost: fieldsheet\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
        }
        let idle = try (0..<100).map { _ in try RawConnection(port: server.port) }
        for connection in idle {
            connection.send(Self.health)
            #expect(await connection.readResponse(timeout: 20)?.status == 200)
        }
        let openedAt = Date()
        let tricklers = [Trickler(headerTrickle, byte: "a"), Trickler(bodyTrickle, byte: " ")]
        defer { tricklers.forEach { $0.stop() } }

        // A normal request meanwhile is answered at once.
        let normal = try RawConnection(port: server.port)
        normal.send(Self.health)
        let response = await normal.readResponse(timeout: 5)
        #expect(response?.status == 200, "a normal request with 500 slow connections open")
        let slow = silent + headerTrickle + bodyTrickle + idle
        if Date().timeIntervalSince(openedAt) < Double(timeout) * 0.8 {
            #expect(slow.filter(\.isClosedByPeer).isEmpty, "no slow connection is closed before its timeout")
        }

        // Every slow connection is closed once its timeout has passed (generous bound for a loaded machine).
        let allClosed = await eventually(timeout: Double(timeout) * 6) { slow.allSatisfy(\.isClosedByPeer) }
        #expect(allClosed, "still open: \(slow.filter { !$0.isClosedByPeer }.count) of \(slow.count)")
        #expect(Date().timeIntervalSince(openedAt) >= Double(timeout) - 1)
        // A head that began but never ended is told why; a silent connection just closes.
        #expect(headerTrickle.allSatisfy { String(decoding: $0.received, as: UTF8.self).hasPrefix("HTTP/1.1 408") })
        #expect(silent.allSatisfy { $0.received.isEmpty })
        #expect(!slow.contains { String(decoding: $0.received, as: UTF8.self).contains("HTTP/1.1 5") })

        let metrics = try RawConnection(port: server.port)
        metrics.send("GET /metrics HTTP/1.1\r\nHost: fieldsheet\r\n\r\n")
        let text = await metrics.readResponse(timeout: 10)?.body ?? ""
        #expect(Self.metric(text, #"fieldsheet_http_connections_timed_out_total{timeout="header"}"#) >= 300)
        #expect(Self.metric(text, #"fieldsheet_http_connections_timed_out_total{timeout="body"}"#) >= 100)
        #expect(Self.metric(text, #"fieldsheet_http_connections_timed_out_total{timeout="idle"}"#) >= 100)
    }

    @Test func theConnectionCapHoldsAndFreesUpWhenAConnectionCloses() async throws {
        let server = ServerProcess()
        try await server.start(options: ["--max-connections", "20", "--idle-timeout", "120", "--header-timeout", "120"])
        defer { server.kill() }
        // Twenty connections, each answered once (so the server holds them) and kept alive.
        let held = try (0..<20).map { _ in try RawConnection(port: server.port) }
        for connection in held {
            connection.send(Self.health)
            #expect(await connection.readResponse(timeout: 20)?.status == 200)
        }
        // The twenty-first waits in the listen backlog, unanswered while the twenty are open…
        let waiting = try RawConnection(port: server.port)
        waiting.send(Self.health)
        #expect(await waiting.read(timeout: 1.5) == .timedOut, "answered past the cap")
        // …and is answered as soon as one of them closes.
        held[0].close()
        #expect(await waiting.readResponse(timeout: 20)?.status == 200)
        // A kept-alive connection serves request after request.
        held[1].clearReceived()
        held[1].send(Self.health)
        #expect(await held[1].readResponse(timeout: 10)?.status == 200)

        held[2].close()
        let metrics = try RawConnection(port: server.port)
        metrics.send("GET /metrics HTTP/1.1\r\nHost: fieldsheet\r\n\r\n")
        let open = await Self.metric(metrics.readResponse(timeout: 20)?.body ?? "", "fieldsheet_http_connections_open")
        #expect((1...20).contains(open), "open connections reported: \(open)")
    }

    @Test func aClientThatStopsReadingIsCutOffAfterTheSendTimeout() async throws {
        let server = ServerProcess()
        try await server.createProject("alpha")
        let token = try await server.addUser("ana", project: "alpha")
        let fields = (1...1000).map { #"{ "id": "f\#($0)", "kind": "text", "label": "Field number \#($0) of a wide record" }"# }
        try await server.publish(
            json: #"{ "id": "wide", "version": 1, "title": "Wide Record", "completionLabel": "Create", "pages": [{ "id": "main", "fields": [\#(fields.joined(separator: ","))] }] }"#,
            project: "alpha")
        try await server.start(options: ["--send-timeout", "2", "--idle-timeout", "600", "--header-timeout", "600"])
        defer { server.kill() }
        // Asks for many large answers (about 70 kB each) and reads none of them.
        let reader = try RawConnection(port: server.port, receiveBuffer: 4096)
        let request = "GET /v1/projects/alpha/forms HTTP/1.1\r\nHost: fieldsheet\r\nAuthorization: Bearer \(token)\r\n\r\n"
        let requests = 300
        Thread.detachNewThread { reader.send(String(repeating: request, count: requests)) }
        let metrics = try RawConnection(port: server.port)
        let cutOff = await eventually(timeout: 60) {
            metrics.clearReceived()
            metrics.send("GET /metrics HTTP/1.1\r\nHost: fieldsheet\r\n\r\n")
            return await Self.metric(metrics.readResponse(timeout: 10)?.body ?? "", #"fieldsheet_http_connections_timed_out_total{timeout="send"}"#) >= 1
        }
        #expect(cutOff, "the server noticed the client had stopped reading")
        #expect(await reader.readUntilClosed(timeout: 60), "and closed the connection")
        let answers = String(decoding: reader.received, as: UTF8.self).components(separatedBy: "HTTP/1.1 200").count - 1
        #expect(answers < requests, "cut off after \(answers) of \(requests) answers")
    }

    /// The value of the sample named exactly `name` (with its labels) in Prometheus text, or -1.
    static func metric(_ text: String, _ name: String) -> Int {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(Double(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)) ?? -1)
        }
        return -1
    }
}

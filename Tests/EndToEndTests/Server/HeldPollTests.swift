import FieldSheetTestTraits
import FieldSheetTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Long-polls against the real `fieldsheet-server`: one token cannot hold more than its share of waiting
/// pulls (the excess is answered at once, empty, with `Retry-After`), other requests are served meanwhile,
/// and a server told to stop (SIGTERM) answers the held pulls at once and exits within seconds.
@Suite(.serialized, .measuresTiming)
struct HeldPollTests {
    typealias Storage = AttachmentResilienceTests.Storage

    static func poll(_ token: String, client: String? = nil) -> String {
        "GET /v1/projects/alpha/changes?after=0&wait=60\(client.map { "&client=\($0)" } ?? "") HTTP/1.1\r\nHost: fieldsheet\r\nAuthorization: Bearer \(token)\r\n\r\n"
    }

    static func arrived(_ connection: RawConnection) -> RawResponse? {
        connection.responseSoFar
    }

    static func timed(port: Int, _ request: String) async throws -> (RawResponse?, Duration) {
        let started = ContinuousClock.now
        let connection = try RawConnection(port: port)
        defer { connection.close() }
        connection.send(request)
        let response = await connection.readResponse(timeout: 30)
        return (response, ContinuousClock.now - started)
    }

    @Test(arguments: Storage.available)
    func oneTokensPollsAreCappedOthersAreServedAndSigtermAnswersTheHeldPollsAtOnce(storage: Storage) async throws {
        try await storage.withServer { server in
            try await server.createProject("alpha")
            let mallory = try await server.addUser("mallory", project: "alpha")
            let ben = try await server.addUser("ben", project: "alpha")
            try await server.start()

            // 40 waiting pulls on one token: 8 are held, the other 32 are answered at once.
            let flood = try (0..<40).map { _ in try RawConnection(port: server.port) }
            for connection in flood { connection.send(Self.poll(mallory)) }
            /// The responses that have arrived, reading what is pending without waiting.
            func answers(_ connections: [RawConnection]) -> [RawResponse] { connections.compactMap(Self.arrived) }
            #expect(await eventually(timeout: 20) { answers(flood).count >= 32 })
            try await Task.sleep(for: .seconds(1))  // none of the held ones answers meanwhile (they wait 60 s)
            let answered = answers(flood)
            let waiting = flood.filter { Self.arrived($0) == nil }
            #expect(answered.count == 32, "\(answered.count) of 40 pulls on one token answered at once")
            #expect(waiting.count == 8)
            for response in answered {
                #expect(response.status == 200)
                #expect(response.headers["retry-after"] == "5")
                #expect(response.body.contains("\"changes\":[]"), "\(response.body)")
            }

            // Per device: two held, the third answered at once.
            let device = try (0..<3).map { _ in try RawConnection(port: server.port) }
            for connection in device { connection.send(Self.poll(ben, client: "ben-phone")) }
            #expect(await eventually(timeout: 20) { answers(device).count >= 1 })
            try await Task.sleep(for: .seconds(1))
            let deviceAnswers = answers(device)
            #expect(deviceAnswers.count == 1)
            #expect(deviceAnswers.first?.headers["retry-after"] == "5")
            let held = waiting + device.filter { Self.arrived($0) == nil }

            // Health and another member's ordinary pull meanwhile.
            var latencies: [Duration] = []
            for _ in 0..<20 {
                let (health, healthTook) = try await Self.timed(port: server.port, "GET /v1/health HTTP/1.1\r\nHost: fieldsheet\r\n\r\n")
                #expect(health?.status == 200)
                let (pull, pullTook) = try await Self.timed(port: server.port, "GET /v1/projects/alpha/changes?after=0 HTTP/1.1\r\nHost: fieldsheet\r\nAuthorization: Bearer \(ben)\r\n\r\n")
                #expect(pull?.status == 200)
                latencies += [healthTook, pullTook]
            }
            let slowest = latencies.max() ?? .zero
            print("HeldPollTests[\(storage)]: health and pulls with 10 polls held: slowest \(slowest)")
            #expect(slowest < .seconds(1))

            // SIGTERM: the ten held pulls are answered (empty) and the process exits within seconds.
            #expect(held.count == 10)
            let pid = try #require(server.processIdentifier)
            let signalled = ContinuousClock.now
            kill(pid, SIGTERM)
            var answeredAtStop = 0
            for connection in held where await connection.readResponse(timeout: 5)?.status == 200 { answeredAtStop += 1 }
            let answerTook = ContinuousClock.now - signalled
            #expect(await eventually(timeout: 30) { server.processIdentifier == nil })
            let exitTook = ContinuousClock.now - signalled
            print("HeldPollTests[\(storage)]: SIGTERM answered \(answeredAtStop) held pulls in \(answerTook), exit after \(exitTook)")
            #expect(answeredAtStop == 10)
            #expect(exitTook < .seconds(3), "the server took \(exitTook) to stop")
        }
    }
}

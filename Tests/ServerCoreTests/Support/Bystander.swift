import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SyncCore
import Testing

/// Another member going about their work while a test does something hostile: small pushes (and downloads of
/// one of their own attachments), one after another on a connection of their own, each timed. The hostile
/// tests hold these to the bound: p99 at most 1 s over what the same requests take with nothing
/// hostile going on (so that a loaded 2-core machine does not fail a test by itself).
struct Bystander {
    let device: Device
    /// The form of the small records pushed, with a text field `title`.
    let form: String
    /// One of the member's stored attachments, downloaded after each push.
    var attachment: String?

    /// What `body` returns, and the latencies of the member's requests made meanwhile (at least `minimum`, all
    /// answered as expected: pushes applied, downloads whole).
    func timing<T: Sendable>(port: Int, minimum: Int = 20, _ body: () async throws -> T) async throws -> (value: T, latencies: [Duration]) {
        let finished = Flag()
        let load = Task { try await requests(port: port, until: finished, minimum: minimum) }
        let value: T
        do {
            value = try await body()
        } catch {
            finished.set()
            _ = try? await load.value
            throw error
        }
        finished.set()
        return (value, try await load.value)
    }

    /// The member's requests with nothing else going on.
    func baseline(port: Int, count: Int = 20) async throws -> [Duration] {
        try await timing(port: port, minimum: count) {}.latencies
    }

    private func requests(port: Int, until finished: Flag, minimum: Int) async throws -> [Duration] {
        try await TestClient.withClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(120))) { client in
            var latencies: [Duration] = []
            while latencies.count < minimum || !finished.isSet {
                let mutation = device.mutation(UUID(), form: form, ["title": device.change(.text("Meanwhile \(latencies.count)"))])
                let body = PushRequest(clientID: device.clientID, mutations: [mutation]).jsonBytes()
                var sent = ContinuousClock.now
                let pushed = try await client.execute(TestClient.Request(
                    "/v1/projects/\(device.project)/push", method: .post, authority: "localhost",
                    headers: [.authorization: "Bearer \(device.token)", .contentType: "application/json"], body: ByteBuffer(bytes: body)))
                latencies.append(ContinuousClock.now - sent)
                #expect(pushed.status == .ok, "the bystander's push")
                if let pushedBody = pushed.body, pushed.status == .ok {
                    #expect(try PushResponse(jsonBytes: Array(pushedBody.readableBytesView)).outcomes.first?.status == .applied)
                }
                guard let attachment else { continue }
                sent = ContinuousClock.now
                let downloaded = try await client.execute(TestClient.Request(
                    "/v1/projects/\(device.project)/attachments/\(attachment)", method: .get, authority: "localhost",
                    headers: [.authorization: "Bearer \(device.token)"]))
                latencies.append(ContinuousClock.now - sent)
                #expect(downloaded.status == .ok, "the bystander's download")
            }
            return latencies
        }
    }

    /// The 99th percentile of `latencies`.
    static func p99(_ latencies: [Duration]) -> Duration {
        let sorted = latencies.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
    }

    /// Prints and checks the bound: p99 of the requests made meanwhile at most 1 s over the baseline's.
    static func check(_ latencies: [Duration], baseline: [Duration], during what: String) {
        let sorted = latencies.sorted()
        let p99 = p99(latencies)
        print("\(what): \(latencies.count) requests of another member meanwhile, p50 \(sorted[sorted.count / 2]), p99 \(p99), max \(sorted.last ?? .zero) (p99 before: \(Self.p99(baseline)))")
        #expect(p99 <= .seconds(1) + Self.p99(baseline), "another member waited during \(what): p99 \(p99)")
    }
}

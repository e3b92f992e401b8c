import FieldSheetTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import SyncCore

extension Device {
    /// `GET …/changes?after=…&wait=…` on a connection of its own to the server listening on `port` (a
    /// waiting pull holds its connection, and the server closes it after answering).
    func longPoll(port: Int, after: Int64, wait: Int) async throws -> (page: PullPage, took: Duration) {
        let started = ContinuousClock.now
        let response = try await rawLongPoll(port: port, query: "after=\(after)&wait=\(wait)")
        let body = response.body ?? ByteBuffer()
        guard response.status == .ok else { throw TestFailure("pull answered \(response.status): \(String(buffer: body))") }
        return (try PullPage(jsonBytes: [UInt8](buffer: body)), ContinuousClock.now - started)
    }

    func rawLongPoll(port: Int, query: String) async throws -> TestClient.Response {
        let request = TestClient.Request("/v1/projects/\(project)/changes?\(query)", method: .get, authority: "localhost", headers: headers, body: nil)
        return try await TestClient.withClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(90))) { client in
            try await client.execute(request)
        }
    }
}


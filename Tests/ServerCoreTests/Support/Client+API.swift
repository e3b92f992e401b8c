import Foundation
import FormModel
import Hummingbird
import HummingbirdTesting
import SyncCore

/// Small builders and calls for the sync API, so tests read as what they check.
struct Device: Sendable {
    var clientID: String
    var token: String
    var project: String = "alpha"

    /// A change stamped `millis` after a minute ago, counted from `now` (pass one reading to devices that
    /// must be ordered by `millis` alone, however their tasks are scheduled).
    func change(_ value: AnswerValue?, base: Int64 = 0, millis: Int64 = 1_000, now: Int64 = HybridLogicalClock.wallMillis()) -> FieldChange {
        FieldChange(value: value, baseRevision: base, hlc: HybridTimestamp(millis: now - 60_000 + millis, counter: 0))
    }

    func mutation(_ record: UUID, state: RecordState = .submitted, form: String = "job", version: Int = 1, id: String = UUID().uuidString, _ changes: [String: FieldChange]) -> Mutation {
        Mutation(mutationID: id, recordID: record, form: FormKey(id: form, version: version), state: state, changes: changes)
    }

    func push(_ client: some TestClientProtocol, _ mutations: [Mutation]) async throws -> (TestResponse, PushResponse?) {
        let body = PushRequest(clientID: clientID, mutations: mutations).jsonBytes()
        let response = try await client.execute(uri: "/v1/projects/\(project)/push", method: .post, headers: headers, body: ByteBuffer(bytes: body))
        return (response, response.status == .ok ? try PushResponse(jsonBytes: Array(response.body.readableBytesView)) : nil)
    }

    func pull(_ client: some TestClientProtocol, after: Int64 = 0, limit: Int? = nil) async throws -> PullPage {
        let query = "after=\(after)" + (limit.map { "&limit=\($0)" } ?? "")
        let response = try await client.execute(uri: "/v1/projects/\(project)/changes?\(query)", method: .get, headers: headers)
        guard response.status == .ok else { throw TestFailure("pull answered \(response.status): \(String(buffer: response.body))") }
        return try PullPage(jsonBytes: [UInt8](buffer: response.body))
    }

    func get(_ client: some TestClientProtocol, _ path: String) async throws -> TestResponse {
        try await client.execute(uri: path, method: .get, headers: headers)
    }

    var headers: HTTPFields { [.authorization: "Bearer \(token)", .contentType: "application/json"] }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Data {
    init(buffer: ByteBuffer) { self.init(buffer.readableBytesView) }
}

extension TestResponse {
    var problem: ProblemDetails? { try? JSONDecoder().decode(ProblemDetails.self, from: Data(buffer: body)) }
    var text: String { String(buffer: body) }
}

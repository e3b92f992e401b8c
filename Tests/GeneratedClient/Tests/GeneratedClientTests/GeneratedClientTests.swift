@testable import FieldSheetAPI
import Foundation
import OpenAPIRuntime
import OpenAPIURLSession
import Testing

/// A client generated from Schema/openapi.yaml (swift-openapi-generator, at build time) against the real
/// fieldsheet-server on loopback: it pushes, pulls and reads records, and gets its ids back as it sent them.
@Suite(.serialized)
struct GeneratedClientTests {
    @Test func aGeneratedClientPushesPullsAndReadsRecords() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let collector = try await server.member("ana", role: "collector")
        let reviewer = try await server.member("rita", role: "reviewer")
        try await server.start()
        let ana = Client(serverURL: server.url, transport: URLSessionTransport(), middlewares: [BearerToken(token: collector)])
        let rita = Client(serverURL: server.url, transport: URLSessionTransport(), middlewares: [BearerToken(token: reviewer)])

        // Ids in lowercase (as most languages write them) and in uppercase (as Swift's UUID does).
        let lower = UUID().uuidString.lowercased()
        let upper = UUID().uuidString
        let pushed = try await ana.push(
            path: .init(project: "alpha"),
            body: .json(.init(clientId: "generated-1", mutations: [
                Records.job(recordId: lower, title: "Boiler", count: 2),
                Records.job(recordId: upper, title: "Pump", count: 5),
            ])))
        let outcomes = try pushed.ok.body.json.outcomes
        #expect(outcomes.map(\.status) == [.applied, .applied])
        #expect(outcomes.map(\.recordId) == [lower, upper], "outcomes echo the ids as sent")

        // The reviewer pulls both, in commit order, ids in lowercase.
        let page = try await rita.pull(path: .init(project: "alpha"), query: .init(after: 0, limit: 10)).ok.body.json
        #expect(page.changes.map(\.recordId) == [lower, upper.lowercased()])
        #expect(page.changes.map(Records.title) == ["Boiler", "Pump"])
        #expect(page.changes.map(Records.count) == [2, 5])
        #expect(page.cursor == 2)
        #expect(page.hasMore == false)

        // An edit based on the pulled revision, then one record read by its id.
        let revision = try #require(page.changes.first?.revision)
        let edited = try await ana.push(
            path: .init(project: "alpha"),
            body: .json(.init(clientId: "generated-1", mutations: [Records.job(recordId: lower, title: "Boiler room", count: 3, base: revision)])))
        #expect(try edited.ok.body.json.outcomes.map(\.status) == [.applied])
        let record = try await rita.getRecord(path: .init(project: "alpha", recordId: lower)).ok.body.json
        #expect(Records.title(record) == "Boiler room")
        #expect(record.revision == revision + 1)
        #expect(record.author == "ana")

        // What the contract says of errors holds for the generated client too.
        let missing = try await rita.getRecord(path: .init(project: "alpha", recordId: UUID().uuidString))
        guard case .notFound(let notFound) = missing else { Issue.record("expected 404, got \(missing)"); return }
        #expect(try notFound.body.applicationProblemJson.status == 404)
        let tooLong = try await rita.pull(path: .init(project: "alpha"), query: .init(after: 2, wait: 61))
        guard case .badRequest(let badRequest) = tooLong else { Issue.record("expected 400, got \(tooLong)"); return }
        #expect(try badRequest.body.applicationProblemJson.field == "wait")
    }
}

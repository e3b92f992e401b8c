import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
@testable import ServerSQLite
import SyncCore
import Testing

/// Ids come back as the contract says: an outcome echoes the mutation's `recordId` exactly as sent;
/// pulled and fetched records carry it in lowercase.
struct RecordIDCaseTests {
    /// A push body written by hand, as a client in any language would, with `recordId` in the case given.
    static func body(clientID: String, mutationID: String, recordID: String, title: String, hlc: Int64) -> ByteBuffer {
        return ByteBuffer(string: """
            {"clientId":"\(clientID)","mutations":[{"mutationId":"\(mutationID)","recordId":"\(recordID)","formId":"job","formVersion":1,\
            "state":"submitted","changes":{"title":{"value":{"text":"\(title)"},"baseRevision":0,"hlc":\(hlc)}}}]}
            """)
    }

    /// The outcomes' `recordId`s as the server wrote them (not parsed into UUIDs).
    static func outcomeIds(_ response: TestResponse) throws -> [String] {
        struct Answer: Decodable { var outcomes: [Outcome] }
        struct Outcome: Decodable {
            var recordID: String
            private enum CodingKeys: String, CodingKey {
                case recordID = "recordId"
            }
        }
        return try JSONDecoder().decode(Answer.self, from: Data(buffer: response.body)).outcomes.map(\.recordID)
    }

    @Test(arguments: Backend.available)
    func anOutcomeEchoesTheRecordIDAsSentAndRecordsComeBackLowercase(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            let id = UUID()
            let lower = id.uuidString.lowercased()
            // One clock reading for every mutation, so that the retry below is the very same mutation.
            let hlc = HybridTimestamp(millis: HybridLogicalClock.wallMillis() - 60_000, counter: 0).rawValue
            let mixed = String(lower.enumerated().map { $0.offset.isMultiple(of: 2) ? Character($0.element.uppercased()) : $0.element })
            try await server.app.test(.router) { client in
                for (mutationID, text) in [("m1", lower), ("m2", id.uuidString), ("m3", mixed)] {
                    let response = try await client.execute(
                        uri: "/v1/projects/alpha/push", method: .post, headers: device.headers,
                        body: Self.body(clientID: "d1", mutationID: mutationID, recordID: text, title: mutationID, hlc: hlc))
                    #expect(response.status == .ok, "\(response.text)")
                    #expect(try Self.outcomeIds(response) == [text])
                }
                // A retry of m1 written in another case gets m1's stored outcome, echoed as this retry sent it.
                let retry = try await client.execute(
                    uri: "/v1/projects/alpha/push", method: .post, headers: device.headers,
                    body: Self.body(clientID: "d1", mutationID: "m1", recordID: id.uuidString, title: "m1", hlc: hlc))
                #expect(try Self.outcomeIds(retry) == [id.uuidString])

                let page = try await device.get(client, "/v1/projects/alpha/changes?after=0")
                #expect(page.text.contains("\"recordId\":\"\(lower)\""), "\(page.text)")
                for path in [lower, id.uuidString, mixed] {
                    let one = try await device.get(client, "/v1/projects/alpha/records/\(path)")
                    #expect(one.status == .ok)
                    #expect(one.text.contains("\"recordId\":\"\(lower)\""))
                }
            }
        }
    }

    /// A data directory written when SQLite held ids in uppercase is migrated: its records are found.
    @Test func uppercaseIdsStoredByAnEarlierVersionAreMigrated() async throws {
        try await TestServer.withStorage(.sqlite) { located in
            let storage = try #require(located.handle.storage as? SQLiteStorage)
            try SQLiteStorage.migrator.migrate(storage.pool, upTo: "v1")
            let project = try await storage.createProject(name: "alpha")
            let id = UUID()
            try await storage.pool.write { db in
                // The first version's member, as it stored one (today's storage also writes tables added since).
                try db.execute(sql: "INSERT INTO users (id, name, created_at) VALUES (1, 'ana', 0)")
                try db.execute(sql: "INSERT INTO memberships (user_id, project_id, role) VALUES (1, ?, 'collector')", arguments: [project.id])
                try db.execute(sql: "INSERT INTO tokens (user_id, token_hash, created_at) VALUES (1, ?, 0)", arguments: [Data(repeating: 1, count: 32)])
                try db.execute(sql: """
                    INSERT INTO records (project_id, id, form_id, form_version, state, author_id, shared, revision, sequence, fields, updated_at)
                    VALUES (?, ?, 'job', 1, 'submitted', 1, 1, 1, 1, '{}', 0)
                    """, arguments: [project.id, id.uuidString])
            }
            try await storage.migrate()
            #expect(try await storage.record(projectID: project.id, id: id)?.id == id)
        }
    }
}

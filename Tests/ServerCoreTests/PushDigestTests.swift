import Crypto
import Foundation
import FormModel
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
@testable import ServerSQLite
import SyncCore
import Testing
@testable import ServerCore
@testable import ServerStorage

/// The retry digest taken over the bytes a device sent, the closed forms read with the push's snapshot, and the
/// snapshot compared by revisions.
struct PushDigestTests {
    /// A push body as a device writes it: each mutation in its canonical form (`Mutation.jsonBytes()`).
    static func deviceBody(clientID: String, _ mutations: [Mutation]) -> ByteBuffer {
        ByteBuffer(bytes: PushRequest.deviceBytes(clientID: clientID, mutations))
    }

    static func pushAsDevice(_ client: some TestClientProtocol, _ device: Device, _ mutations: [Mutation]) async throws -> PushResponse {
        let response = try await client.execute(
            uri: "/v1/projects/\(device.project)/push", method: .post, headers: device.headers, body: deviceBody(clientID: device.clientID, mutations))
        try #require(response.status == .ok, "\(String(buffer: response.body))")
        return try PushResponse(jsonBytes: Array(response.body.readableBytesView))
    }

    @Test(arguments: Backend.available)
    func theDevicesBytesAndARewrittenCopyOfTheSameMutationAreOneRetry(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                let mutation = device.mutation(UUID(), state: .draft, id: "m1", ["title": device.change(.text("Pump 4 / north")), "count": device.change(.integer(3))])
                let first = try await Self.pushAsDevice(client, device, [mutation])
                #expect(first.outcomes.map(\.status) == [.applied])
                // The same mutation re-encoded by Foundation (keys in another order, the id in uppercase, `/` escaped).
                let (response, second) = try await device.push(client, [mutation])
                #expect(response.status == .ok, "\(response.text)")
                #expect(second?.outcomes == first.outcomes)
                // And as the device sent it, again.
                #expect(try await Self.pushAsDevice(client, device, [mutation]).outcomes == first.outcomes)
                let page = try await device.pull(client)
                #expect(page.changes.count == 1)
                #expect(page.cursor == 1, "written once")
                // A different change under the same id is still refused.
                var changed = mutation
                changed.changes["count"] = device.change(.integer(4))
                let (refused, _) = try await device.push(client, [changed])
                #expect(refused.problem?.type == "https://fieldsheet.dev/problems/mutation-id-reused")
            }
        }
    }

    @Test func aRetryOfAMutationStoredWithTheEarlierDigestIsRecognised() async throws {
        try await TestServer.with(.sqlite) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            let sqlite = try #require(server.storage as? SQLiteStorage)
            try await server.app.test(.router) { client in
                let mutation = device.mutation(UUID(), state: .draft, id: "m1", ["title": device.change(.text("a/b"))])
                let first = try await Self.pushAsDevice(client, device, [mutation])
                // As a server before this one stored it: the digest of the earlier canonical form.
                let earlier = Data(SHA256.hash(data: mutation.canonicalBytes()))
                #expect(earlier != Data(SHA256.hash(data: mutation.jsonBytes())))
                try await sqlite.pool.write { db in
                    try db.execute(sql: "UPDATE mutations SET digest = ? WHERE mutation_id = 'm1'", arguments: [earlier])
                    #expect(db.changesCount == 1)
                }
                #expect(try await Self.pushAsDevice(client, device, [mutation]).outcomes == first.outcomes)
                let (response, again) = try await device.push(client, [mutation])
                #expect(response.status == .ok, "\(response.text)")
                #expect(again?.outcomes == first.outcomes)
            }
        }
    }

    @Test(arguments: Backend.available)
    func aFormClosedAfterAPushWasPlannedMovesItsSnapshot(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let token = try await server.member("ana", project: "alpha", role: .admin)
            let project = try await server.project("alpha")
            let record = UUID()
            let planned = try await server.storage.pushSnapshot(projectID: project.id, clientID: "d1", mutationIDs: ["m1"], recordIDs: [record])
            #expect(planned.closedForms.isEmpty)
            try await server.storage.setFormClosed(projectID: project.id, formID: "job", closed: true, userID: try await server.userID(token: token))
            // What the write reads in its transaction: the form closed, so the plan made on the earlier snapshot
            // is not written; the push is decided again and its new record refused.
            let plan = try await server.storage.push(projectID: project.id, clientID: "d1", mutationIDs: ["m1"], recordIDs: [record]) { current in
                #expect(current.closedForms == ["job"])
                #expect(!current.decidesLike(planned))
                return PushPlan()
            }
            #expect(plan.records.isEmpty)
            let device = Device(clientID: "d1", token: token)
            try await server.app.test(.router) { client in
                let outcome = try await Self.pushAsDevice(client, device, [device.mutation(record, state: .draft, id: "m1", ["title": device.change(.text("A"))])])
                #expect(outcome.outcomes.first?.status == .rejected)
                #expect(outcome.outcomes.first?.problem?.type == "https://fieldsheet.dev/problems/form-closed")
            }
        }
    }

    @Test(arguments: Backend.available)
    func aCommitComparesRevisionsAndHandsBackTheSnapshotThatMoved(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let token = try await server.member("ana", project: "alpha", role: .collector)
            let project = try await server.project("alpha")
            let device = Device(clientID: "d1", token: token)
            let record = UUID()
            try await server.app.test(.router) { client in
                _ = try await Self.pushAsDevice(client, device, [device.mutation(record, state: .draft, id: "m1", ["title": device.change(.text("A"))])])
                let planned = try await server.storage.pushSnapshot(projectID: project.id, clientID: "d1", mutationIDs: ["m1", "m2"], recordIDs: [record])
                #expect(planned.records[record]?.revision == 1)
                // Unchanged since planning: the plan is written (an empty one writes nothing).
                let unchanged = try await server.storage.commit(
                    PushPlan(), planned: planned, projectID: project.id, clientID: "d1", mutationIDs: ["m1", "m2"], recordIDs: [record], entityIDs: [])
                #expect(unchanged.records.isEmpty)
                // Another push edits the record and stores m2's outcome: the commit writes nothing and hands back
                // what its transaction read, content included.
                _ = try await Self.pushAsDevice(client, device, [device.mutation(record, state: .draft, id: "m2", ["title": device.change(.text("B"), base: 1)])])
                do {
                    _ = try await server.storage.commit(
                        PushPlan(), planned: planned, projectID: project.id, clientID: "d1", mutationIDs: ["m1", "m2"], recordIDs: [record], entityIDs: [])
                    Issue.record("a moved snapshot was committed")
                } catch let moved as PushSnapshotMoved {
                    #expect(moved.snapshot.records[record]?.revision == 2)
                    #expect(moved.snapshot.records[record]?.fields["title"]?.value == .text("B"))
                    #expect(Set(moved.snapshot.storedOutcomes.keys) == ["m1", "m2"])
                    #expect(!moved.snapshot.decidesLike(planned))
                }
                let page = try await device.pull(client)
                #expect(page.changes.count == 1 && page.cursor == 2, "nothing written by the refused commit")
            }
        }
    }

    @Test func snapshotsAreComparedByRevision() {
        let record = StoredRecord(
            id: UUID(), form: FormKey(id: "job", version: 1), state: .draft, authorID: 1, authorName: "ana", shared: false,
            revision: 2, sequence: 5, times: RecordTimes(), fields: ["title": FieldState(value: .text("A"), revision: 2, hlc: HybridTimestamp(rawValue: 1), clientID: "d1")])
        let outcome = StoredOutcome(mutationID: "m1", userID: 1, digest: Data([1, 2]), outcome: MutationOutcome(mutationID: "m1", recordID: record.id, status: .applied, revision: 2))
        let snapshot = PushSnapshot(storedOutcomes: ["m1": outcome], records: [record.id: record])
        var sameRevision = snapshot
        sameRevision.records[record.id]?.sequence = 9
        #expect(snapshot.decidesLike(sameRevision), "a new sequence (an attachment arrived) is not a change to decide on")
        var edited = snapshot
        edited.records[record.id]?.revision = 3
        #expect(!snapshot.decidesLike(edited))
        var gone = snapshot
        gone.records = [:]
        #expect(!snapshot.decidesLike(gone) && !gone.decidesLike(snapshot))
        var otherDigest = snapshot
        otherDigest.storedOutcomes["m1"]?.digest = Data([3])
        #expect(!snapshot.decidesLike(otherDigest))
        var closed = snapshot
        closed.closedForms = ["job"]
        #expect(!snapshot.decidesLike(closed))
    }
}

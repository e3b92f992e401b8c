import Foundation
import FormModel
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// Every role × every route × own record / another member's record / another project's record.
struct AuthMatrixTests {
    struct World {
        var actor: Device
        var ownDraft = UUID(), ownSubmitted = UUID()
        var otherDraft = UUID(), otherSubmitted = UUID()
        var foreign = UUID()
    }

    func withWorld(_ backend: Backend, role: Role, _ body: @escaping @Sendable (TestServer, World, any TestClientProtocol) async throws -> Void) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            try await server.publish(TestForms.job(), project: "beta")
            var world = World(actor: Device(clientID: "actor", token: try await server.member("actor", project: "alpha", role: role)))
            let other = Device(clientID: "other", token: try await server.member("other", project: "alpha", role: .collector))
            let stranger = Device(clientID: "stranger", token: try await server.member("stranger", project: "beta", role: .admin), project: "beta")
            world.foreign = UUID()
            let snapshot = world
            try await server.app.test(.router) { client in
                let actor = snapshot.actor
                _ = try await actor.push(client, [
                    actor.mutation(snapshot.ownDraft, state: .draft, ["title": actor.change(.text("mine"))]),
                    actor.mutation(snapshot.ownSubmitted, ["title": actor.change(.text("mine"))]),
                ])
                _ = try await other.push(client, [
                    other.mutation(snapshot.otherDraft, state: .draft, ["title": other.change(.text("theirs"))]),
                    other.mutation(snapshot.otherSubmitted, ["title": other.change(.text("theirs"))]),
                ])
                _ = try await stranger.push(client, [stranger.mutation(snapshot.foreign, ["title": stranger.change(.text("foreign"))])])
                try await body(server, snapshot, client)
            }
        }
    }

    @Test(arguments: Backend.available, Role.allCases)
    func readingOneRecord(backend: Backend, role: Role) async throws {
        try await withWorld(backend, role: role) { _, world, client in
            let actor = world.actor
            func status(_ project: String, _ id: UUID) async throws -> (Int, String) {
                let response = try await actor.get(client, "/v1/projects/\(project)/records/\(id)")
                return (response.status.code, response.text)
            }
            #expect(try await status("alpha", world.ownDraft).0 == 200)
            #expect(try await status("alpha", world.ownSubmitted).0 == 200)
            #expect(try await status("alpha", world.otherDraft).0 == 404, "drafts are private to their author")
            #expect(try await status("alpha", world.otherSubmitted).0 == (role == .collector ? 404 : 200))
            let missing = try await status("alpha", UUID())
            let foreignHere = try await status("alpha", world.foreign)
            #expect(missing.0 == 404)
            #expect(foreignHere == missing, "another project's record looks exactly like a missing one")
            let foreignThere = try await status("beta", world.foreign)
            let noProject = try await status("gamma", world.foreign)
            #expect(foreignThere == noProject)
            #expect(foreignThere.0 == 404)
        }
    }

    @Test(arguments: Backend.available, Role.allCases)
    func pushingChanges(backend: Backend, role: Role) async throws {
        try await withWorld(backend, role: role) { _, world, client in
            let actor = world.actor
            func outcome(_ record: UUID, state: RecordState = .submitted) async throws -> MutationOutcome? {
                let (_, push) = try await actor.push(client, [actor.mutation(record, state: state, ["notes": actor.change(.text("edit"), base: 1)])])
                return push?.outcomes.first
            }
            #expect(try await outcome(world.ownDraft, state: .draft)?.status == .applied)
            #expect(try await outcome(world.ownSubmitted)?.status == .applied)
            #expect(try await outcome(world.otherDraft, state: .draft)?.problem?.status == 404)
            let otherSubmitted = try await outcome(world.otherSubmitted)
            if role == .collector {
                #expect(otherSubmitted?.problem?.status == 404)
            } else {
                #expect(otherSubmitted?.status == .applied, "reviewers may edit submitted records")
                #expect(try await outcome(world.otherSubmitted, state: .deleted)?.problem?.status == 403, "but not delete them")
            }
            // The same id in another project is another record: pushing it here creates one in alpha.
            let foreign = try await outcome(world.foreign)
            #expect(foreign?.status == .rejected, "a new submitted record without a title does not validate")
            let other = Device(clientID: "actor", token: actor.token, project: "beta")
            let (response, _) = try await other.push(client, [other.mutation(world.foreign, ["notes": other.change(.text("x"), base: 1)])])
            #expect(response.status == .notFound)
        }
    }

    @Test(arguments: Backend.available, Role.allCases)
    func pullingTheChangeFeed(backend: Backend, role: Role) async throws {
        try await withWorld(backend, role: role) { _, world, client in
            let page = try await world.actor.pull(client)
            let expected: Set<UUID> = role == .collector ? [world.ownDraft, world.ownSubmitted] : [world.ownDraft, world.ownSubmitted, world.otherSubmitted]
            #expect(Set(page.changes.map(\.recordID)) == expected)
            let beta = try await client.execute(uri: "/v1/projects/beta/changes", method: .get, headers: world.actor.headers)
            #expect(beta.status == .notFound)
        }
    }

    @Test(arguments: Backend.available, Role.allCases)
    func formsListingAndPublishing(backend: Backend, role: Role) async throws {
        try await withWorld(backend, role: role) { _, world, client in
            let list = try await world.actor.get(client, "/v1/projects/alpha/forms")
            #expect(list.status == .ok)
            #expect(list.text.contains("\"formId\":\"job\""))
            #expect(try await world.actor.get(client, "/v1/projects/beta/forms").status == .notFound)
            let body = try JSONEncoder().encode(TestForms.job(extraField: true))
            let publish = try await client.execute(uri: "/v1/projects/alpha/forms", method: .post, headers: world.actor.headers, body: .init(bytes: body))
            #expect(publish.status == (role == .admin ? .created : .forbidden))
            let beta = try await client.execute(uri: "/v1/projects/beta/forms", method: .post, headers: world.actor.headers, body: .init(bytes: body))
            #expect(beta.status == .notFound)
        }
    }

    @Test(arguments: Backend.available, Role.allCases)
    func reviewingARecord(backend: Backend, role: Role) async throws {
        try await withWorld(backend, role: role) { _, world, client in
            let actor = world.actor
            func review(_ project: String, _ id: UUID) async throws -> (Int, String) {
                let response = try await client.execute(
                    uri: "/v1/projects/\(project)/records/\(id)/review", method: .post, headers: actor.headers,
                    body: ByteBuffer(string: #"{"state":"hasIssues","comment":"Check the title."}"#))
                return (response.status.code, response.text)
            }
            // A collector may not review even their own record; reviewers and admins review what they see.
            #expect(try await review("alpha", world.ownSubmitted).0 == (role == .collector ? 403 : 200))
            #expect(try await review("alpha", world.otherDraft).0 == 404, "drafts are private to their author")
            #expect(try await review("alpha", world.otherSubmitted).0 == (role == .collector ? 404 : 200))
            #expect(try await review("alpha", world.ownDraft).0 == (role == .collector ? 403 : 409), "only submitted records are reviewed")
            let missing = try await review("alpha", UUID())
            #expect(missing.0 == 404)
            #expect(try await review("alpha", world.foreign) == missing, "another project's record looks exactly like a missing one")
            #expect(try await review("beta", world.foreign) == (try await review("gamma", world.foreign)))
        }
    }

    @Test(arguments: Backend.available, Role.allCases)
    func readingARecordsHistory(backend: Backend, role: Role) async throws {
        try await withWorld(backend, role: role) { _, world, client in
            let actor = world.actor
            func history(_ project: String, _ id: UUID) async throws -> (Int, String) {
                let response = try await actor.get(client, "/v1/projects/\(project)/records/\(id)/history")
                return (response.status.code, response.text)
            }
            #expect(try await history("alpha", world.ownDraft).0 == 200)
            #expect(try await history("alpha", world.ownSubmitted).0 == 200)
            #expect(try await history("alpha", world.otherDraft).0 == 404)
            #expect(try await history("alpha", world.otherSubmitted).0 == (role == .collector ? 404 : 200))
            let missing = try await history("alpha", UUID())
            #expect(missing.0 == 404)
            #expect(try await history("alpha", world.foreign) == missing)
            #expect(try await history("beta", world.foreign) == (try await history("gamma", world.foreign)))
        }
    }

    @Test(arguments: Backend.available, Role.allCases)
    func theConflictLog(backend: Backend, role: Role) async throws {
        try await withWorld(backend, role: role) { server, world, client in
            let actor = world.actor
            let list = try await actor.get(client, "/v1/projects/alpha/conflicts?state=all")
            #expect(list.status == (role == .collector ? .forbidden : .ok))
            #expect(try await actor.get(client, "/v1/projects/beta/conflicts").status == .notFound)
            // A conflict in another project is as missing as one that never was.
            let resolve = { (project: String, id: Int64) async throws -> (Int, String) in
                let response = try await client.execute(
                    uri: "/v1/projects/\(project)/conflicts/\(id)/resolve", method: .post, headers: actor.headers,
                    body: ByteBuffer(string: #"{"keep":"server"}"#))
                return (response.status.code, response.text)
            }
            let missing = try await resolve("alpha", 999_999)
            #expect(missing.0 == 404)
            // A conflict logged in beta (a stale edit of the stranger's record there).
            let stranger = Device(clientID: "stranger-2", token: try await server.member("stranger", project: "beta", role: .admin), project: "beta")
            _ = try await stranger.push(client, [stranger.mutation(world.foreign, ["title": stranger.change(.text("stale"), base: 0)])])
            let beta = try await server.project("beta")
            let foreignConflict = try #require(try await server.storage.conflictLog(projectID: beta.id, viewer: 0, openOnly: false, after: 0, limit: 10).first)
            #expect(try await resolve("alpha", foreignConflict.id) == missing, "another project's conflict looks exactly like a missing one")
            #expect(try await resolve("beta", foreignConflict.id) == (try await resolve("gamma", foreignConflict.id)))
        }
    }

    @Test(arguments: Backend.available)
    func everyProjectRouteWantsAValidToken(backend: Backend) async throws {
        // Two failures per route, more than one address may make before it is throttled.
        var limits = ServerLimits()
        limits.authFailureLimit = 1_000
        try await TestServer.with(backend, limits: limits) { server in
            _ = try await server.project("alpha")
            try await server.app.test(.router) { client in
                let routes: [(String, HTTPRequest.Method)] = [
                    ("/v1/projects/alpha/forms", .get), ("/v1/projects/alpha/forms", .post), ("/v1/projects/alpha/push", .post),
                    ("/v1/projects/alpha/changes", .get), ("/v1/projects/alpha/records/\(UUID())", .get),
                    ("/v1/projects/alpha/records/\(UUID())/review", .post), ("/v1/projects/alpha/records/\(UUID())/history", .get),
                    ("/v1/projects/alpha/conflicts", .get), ("/v1/projects/alpha/conflicts/1/resolve", .post),
                    ("/v1/projects/alpha/attachments/\(String(repeating: "ab", count: 32))", .head),
                    ("/v1/projects/alpha/attachments/\(String(repeating: "ab", count: 32))", .put),
                    ("/v1/projects/alpha/attachments/\(String(repeating: "ab", count: 32))", .get),
                ]
                for (path, method) in routes {
                    let none = try await client.execute(uri: path, method: method)
                    #expect(none.status == .unauthorized)
                    #expect(none.headers[.wwwAuthenticate] == "Bearer")
                    let wrong = try await client.execute(uri: path, method: method, headers: [.authorization: "Bearer fst_wrong"])
                    #expect(wrong.status == .unauthorized)
                    #expect(wrong.problem?.type == "https://fieldsheet.dev/problems/unauthorized")
                }
            }
        }
    }

    @Test(arguments: Backend.available)
    func aRevokedTokenStopsWorkingAtOnce(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            let token = try await server.member("ana", project: "alpha", role: .collector)
            try await server.app.test(.router) { client in
                let device = Device(clientID: "d", token: token)
                let before = try await device.get(client, "/v1/projects/alpha/forms")
                #expect(before.status == .ok)
                let revoked = try await server.storage.revokeTokens(userName: "ana")
                #expect(revoked == 1)
                let after = try await device.get(client, "/v1/projects/alpha/forms")
                #expect(after.status == .unauthorized)
            }
        }
    }

    @Test(arguments: Backend.available)
    func tokensAreRandomAndStoredOnlyAsHashes(backend: Backend) async throws {
        let first = AccessToken.generate()
        #expect(first != AccessToken.generate())
        #expect(first.count >= 40)
        #expect(AccessToken.hash(first).count == 32)
        #expect(ConstantTime.equals(AccessToken.hash(first), AccessToken.hash(first)))
        #expect(!ConstantTime.equals(AccessToken.hash(first), AccessToken.hash(first + "x")))
        try await TestServer.with(backend) { server in
            let token = try await server.member("ana", project: "alpha", role: .collector)
            let stored = try await server.storedText()
            #expect(stored.contains("ana"), "the check reads what is stored")
            #expect(!stored.contains(token))
        }
    }
}

import FieldSheetTesting
import Foundation
import FormModel
import SyncClient
import SyncCore
import Testing

/// Signed submissions (docs/signed-submissions.md) on the real server over libcurl, on SQLite and PostgreSQL:
/// devices log in with the real CLI (a login code, a token) and sign each push once; a push altered after
/// signing (signed once or, as older apps do, per mutation), replayed under another device's token, unsigned
/// from a device with a key, or from a revoked device is refused; `fieldsheet-server records verify` finds a
/// history row or a stored push manifest changed in the database with sqlite3/psql.
struct SignedSubmissionTests {
    static let followUpJob = PackagePaths.file("Schema/forms/follow-up-job.json")

    /// Runs `sql` on the server's database with the database's own command-line client.
    static func sql(_ server: ServerProcess, _ sql: String) async throws -> String {
        let result: ProcessResult
        if let database = server.database {
            result = try await Subprocess.run("/usr/bin/psql", [database, "-v", "ON_ERROR_STOP=1", "-tAc", sql], timeout: 60)
        } else {
            result = try await Subprocess.run("/usr/bin/sqlite3", [(server.dataDirectory as NSString).appendingPathComponent("fieldsheet.sqlite"), sql], timeout: 60)
        }
        guard result.status == 0 else { throw FixtureError("\(sql) failed: \(result.output)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func code(_ server: ServerProcess, _ user: String) async throws -> String {
        try await server.admin(["user", "code", user, "--project", "demo"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func verify(_ server: ServerProcess, _ extra: [String] = []) async throws -> ProcessResult {
        try await Subprocess.run(server.binary, ["records", "verify", "--project", "demo"] + extra + server.storageArguments, timeout: 60)
    }

    @Test(arguments: ServerBackend.available)
    func signedHistoriesVerifyAndARowChangedInTheDatabaseIsFound(backend: ServerBackend) async throws {
        try await backend.withDatabase { database in
            let server = ServerProcess(database: database)
            try await server.createProject("demo")
            _ = try await server.addUser("ana", project: "demo")
            let bobToken = try await server.addUser("bob", project: "demo")
            try await server.admin(["form", "publish", Self.followUpJob, "--project", "demo"])
            try await server.start(port: 0)

            // Ana logs in with a code (her key goes with it), Bob with a `user add` token, which several homes may
            // share: it keeps no key, and his changes are recorded unsigned.
            let ana = CLIHome()
            let anaLogin = try await ana.run(["login", "--server", server.url, "--code", try await Self.code(server, "ana")])
            #expect(anaLogin.status == 0, "\(anaLogin.output)")
            let bob = CLIHome()
            let bobLogin = try await bob.run(["login", server.url, "--project", "demo", "--token", bobToken])
            #expect(bobLogin.status == 0, "\(bobLogin.output)")
            #expect(try await Self.sql(server, "SELECT count(*) FROM devices WHERE public_key IS NOT NULL") == "1")

            let anaRecord = try #require(CLIHome.recordID(try await ana.run(["fill", "follow-up-job", "--set", "site=Depot B2", "--set", "technicians=2", "--dismiss"])))
            #expect(try await ana.run("sync").status == 0)
            let edit = try await ana.run(["resume", anaRecord, "--set", "technicians=3", "--complete"])
            #expect(edit.status == 0, "\(edit.output)")
            #expect(try await ana.run("sync").status == 0)
            let bobRecord = try #require(CLIHome.recordID(try await bob.run(["fill", "follow-up-job", "--set", "site=Yard", "--set", "technicians=1", "--complete"])))
            let bobSync = try await bob.run("sync")
            #expect(bobSync.status == 0, "\(bobSync.output)")

            let whole = try await Self.verify(server)
            #expect(whole.status == 0, "\(whole.output)")
            #expect(whole.stdout.contains("record \(anaRecord.lowercased()): whole"), "\(whole.output)")
            #expect(whole.stdout.contains("record \(bobRecord.lowercased()): whole"), "\(whole.output)")
            #expect(whole.stdout.contains("2 records: 2 whole, 0 broken; 3 entries: 2 signed, 1 unsigned"), "\(whole.output)")
            #expect(whole.stdout.contains("of ana\tsigned") && whole.stdout.contains("\"access token\" of bob\tunsigned"), "\(whole.output)")

            // The first entry of Ana's record is changed directly in the database: verify finds it, and only it.
            let first = try await Self.sql(server, "SELECT min(id) FROM record_history WHERE lower(CAST(record_id AS TEXT)) = '\(anaRecord.lowercased())'")
            _ = try await Self.sql(server, "UPDATE record_history SET detail = replace(detail, 'Depot B2', 'Depot B3') WHERE id = \(first)")
            let broken = try await Self.verify(server)
            #expect(broken.status == 2, "\(broken.output)")
            #expect(broken.stdout.contains("record \(anaRecord.lowercased()): BROKEN"), "\(broken.output)")
            #expect(broken.stdout.contains("entry \(first) does not match its hash"), "\(broken.output)")
            #expect(broken.stdout.contains("2 records: 1 whole, 1 broken"), "\(broken.output)")
            let other = try await Self.verify(server, ["--record", bobRecord])
            #expect(other.status == 0 && other.stdout.contains("1 record: 1 whole, 0 broken"), "\(other.output)")
            let quiet = try await Self.verify(server, ["--quiet"])
            #expect(quiet.status == 2 && !quiet.stdout.contains(bobRecord.lowercased()), "\(quiet.output)")

            // A row removed breaks the link of the one after it.
            _ = try await Self.sql(server, "UPDATE record_history SET detail = replace(detail, 'Depot B3', 'Depot B2') WHERE id = \(first)")
            #expect(try await Self.verify(server).status == 0)

            // The signed mutation kept with an entry is not in its hash (its push's signed manifest lists its
            // digest): changed in the database, it no longer matches the manifest, and verify finds that instead.
            let last = try await Self.sql(server, "SELECT max(id) FROM record_history WHERE lower(CAST(record_id AS TEXT)) = '\(anaRecord.lowercased())'")
            let kept = try await Self.sql(server, "SELECT signed_mutation FROM record_history WHERE id = \(last)")
            #expect(kept.contains(#""integer":3"#), "\(kept)")
            #expect(try await Self.sql(server, "SELECT count(*) FROM record_history WHERE signature IS NULL AND manifest_id IS NOT NULL") == "2",
                    "each of Ana's pushes was signed once, over its manifest")
            _ = try await Self.sql(server, "UPDATE record_history SET signed_mutation = replace(signed_mutation, '\"integer\":3', '\"integer\":4') WHERE id = \(last)")
            let forged = try await Self.verify(server, ["--record", anaRecord])
            #expect(forged.status == 2 && forged.stdout.contains("INVALID (the mutation kept with it is not the one its push manifest"), "\(forged.output)")
            _ = try await Self.sql(server, "UPDATE record_history SET signed_mutation = replace(signed_mutation, '\"integer\":4', '\"integer\":3') WHERE id = \(last)")
            #expect(try await Self.verify(server).status == 0)

            // The stored manifest changed (another push's signature put in its place): its signature no longer
            // verifies, and every entry that relies on it is invalid.
            let manifest = try await Self.sql(server, "SELECT manifest_id FROM record_history WHERE id = \(last)")
            let signature = try await Self.sql(server, "SELECT signature FROM push_manifests WHERE id = \(manifest)")
            _ = try await Self.sql(server, "UPDATE push_manifests SET signature = (SELECT signature FROM push_manifests WHERE id <> \(manifest) ORDER BY id LIMIT 1) WHERE id = \(manifest)")
            let manifestChanged = try await Self.verify(server, ["--record", anaRecord])
            #expect(manifestChanged.status == 2 && manifestChanged.stdout.contains("INVALID (the signature of its push manifest #\(manifest) does not verify"), "\(manifestChanged.output)")
            _ = try await Self.sql(server, "UPDATE push_manifests SET signature = '\(signature)' WHERE id = \(manifest)")
            #expect(try await Self.verify(server).status == 0)
            // The entry pointed at another place of the manifest: the hash (rule 4) covers the reference.
            _ = try await Self.sql(server, "UPDATE record_history SET manifest_index = manifest_index + 1 WHERE id = \(last)")
            let moved = try await Self.verify(server, ["--record", anaRecord])
            #expect(moved.status == 2 && moved.stdout.contains("entry \(last) does not match its hash"), "\(moved.output)")
            _ = try await Self.sql(server, "UPDATE record_history SET manifest_index = manifest_index - 1 WHERE id = \(last)")
            #expect(try await Self.verify(server).status == 0)
            _ = try await Self.sql(server, "DELETE FROM record_history WHERE id = \(first)")
            let removed = try await Self.verify(server, ["--record", anaRecord])
            #expect(removed.status == 2 && removed.stdout.contains("does not match its hash"), "\(removed.output)")

            let unknown = try await Self.verify(server, ["--record", UUID().uuidString])
            #expect(unknown.status == 1 && unknown.stderr.contains("has no history for record"), "\(unknown.output)")
            let usage = try await Subprocess.run(server.binary, ["records", "verify", "--project", "demo", "--record", "nope"] + server.storageArguments)
            #expect(usage.status == 64 && usage.stderr.contains("give a record id"), "\(usage.output)")
        }
    }

    /// A device enrolled over libcurl with its own key, as `DeviceLogin.exchange` does it.
    struct Device {
        var key: DeviceSigningKey
        var token: String
    }

    /// `withKey` false: a device that logged in before signatures existed.
    static func enrol(_ server: ServerProcess, _ user: String, transport: CurlTransport, withKey: Bool = true) async throws -> Device {
        let key = DeviceSigningKey()
        let publicKey = withKey ? #","publicKey":"\#(key.publicKey)""# : ""
        let body = #"{"code":"\#(try await code(server, user))","deviceName":"\#(user)-phone"\#(publicKey)}"#
        let response = try await transport.send(TransportRequest(method: "POST", url: server.url + "/v1/login", headers: ["Content-Type": "application/json"], body: Data(body.utf8)))
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        struct Answer: Decodable { var token: String }
        return Device(key: key, token: try JSONDecoder().decode(Answer.self, from: response.body).token)
    }

    static func push(_ server: ServerProcess, _ body: [UInt8], token: String, transport: CurlTransport) async throws -> (status: Int, problem: ProblemDetails?) {
        let response = try await transport.send(TransportRequest(
            method: "POST", url: server.url + "/v1/projects/demo/push",
            headers: ["Content-Type": "application/json", "Authorization": "Bearer \(token)"], body: Data(body)))
        return (response.status, try? JSONDecoder().decode(ProblemDetails.self, from: response.body))
    }

    static func mutation(site: String) -> Mutation {
        Mutation(
            mutationID: UUID().uuidString.lowercased(), recordID: UUID(), form: FormKey(id: "follow-up-job", version: 1), state: .draft,
            changes: ["site": FieldChange(value: .text(site), baseRevision: 0, hlc: HybridTimestamp(millis: HybridLogicalClock.wallMillis(), counter: 0))])
    }

    @Test(arguments: ServerBackend.available)
    func alteredReplayedUnsignedAndRevokedPushesAreRefused(backend: ServerBackend) async throws {
        try await backend.withDatabase { database in
            let server = ServerProcess(database: database)
            try await server.createProject("demo")
            _ = try await server.addUser("ana", project: "demo")
            _ = try await server.addUser("bob", project: "demo")
            let oldToken = try await server.addUser("cy", project: "demo")
            try await server.admin(["form", "publish", Self.followUpJob, "--project", "demo"])
            try await server.start(port: 0)
            let transport = CurlTransport()
            let ana = try await Self.enrol(server, "ana", transport: transport)
            let bob = try await Self.enrol(server, "bob", transport: transport)

            // A batch with one mutation altered after the push was signed: the signed bytes say "Depot", the body
            // sent says "Dep0t". Refused whole: the other mutation, untouched, is not applied either.
            let batch = PushRequest.deviceBytes(clientID: "ana-phone", [Self.mutation(site: "Barn"), Self.mutation(site: "Depot")], signingKey: ana.key)
            let alteredBatch = Array(String(decoding: batch, as: UTF8.self).replacingOccurrences(of: "Depot", with: "Dep0t").utf8)
            let refused = try await Self.push(server, alteredBatch, token: ana.token, transport: transport)
            #expect(refused.status == 403, "\(refused)")
            #expect(refused.problem?.type == "https://fieldsheet.dev/problems/signature-invalid" && refused.problem?.field == "pushSignature", "\(refused)")
            #expect(refused.problem?.detail.contains("altered after the push was signed") == true, "\(refused)")
            // The same from an older app that signs each mutation: the altered one is named.
            let perMutation = PushRequest.deviceBytes(clientID: "ana-phone", [Self.mutation(site: "Barn"), Self.mutation(site: "Depot")], signingKey: ana.key, perMutation: true)
            let alteredOld = Array(String(decoding: perMutation, as: UTF8.self).replacingOccurrences(of: "Depot", with: "Dep0t").utf8)
            let refusedOld = try await Self.push(server, alteredOld, token: ana.token, transport: transport)
            #expect(refusedOld.status == 403 && refusedOld.problem?.field == "signatures[1]", "\(refusedOld)")
            #expect(refusedOld.problem?.detail.contains("altered after it was signed") == true, "\(refusedOld)")
            // Signed both ways at once: refused as ambiguous.
            let both = Array(String(decoding: batch, as: UTF8.self).replacingOccurrences(of: "\"pushSignature\"", with: "\"signatures\":[\"a\",\"b\"],\"pushSignature\"").utf8)
            let ambiguous = try await Self.push(server, both, token: ana.token, transport: transport)
            #expect(ambiguous.status == 400 && ambiguous.problem?.field == "pushSignature", "\(ambiguous)")
            let signed = PushRequest.deviceBytes(clientID: "ana-phone", [Self.mutation(site: "Depot")], signingKey: ana.key)

            // Ana's signed push replayed with Bob's token: his key does not verify her signature.
            let replayed = try await Self.push(server, signed, token: bob.token, transport: transport)
            #expect(replayed.status == 403 && replayed.problem?.type == "https://fieldsheet.dev/problems/signature-invalid", "\(replayed)")

            // A device with a key must sign.
            let unsigned = try await Self.push(server, PushRequest.deviceBytes(clientID: "ana-phone", [Self.mutation(site: "Shed")]), token: ana.token, transport: transport)
            #expect(unsigned.status == 403 && unsigned.problem?.type == "https://fieldsheet.dev/problems/signature-required", "\(unsigned)")
            #expect(try await Self.sql(server, "SELECT count(*) FROM record_history") == "0", "nothing refused was applied")

            // As signed, with her own token: applied.
            let accepted = try await Self.push(server, signed, token: ana.token, transport: transport)
            #expect(accepted.status == 200, "\(accepted)")
            // An older app's push, each mutation signed: still taken, and its entry keeps the mutation's signature.
            let older = PushRequest.deviceBytes(clientID: "ana-phone", [Self.mutation(site: "Shed 2")], signingKey: ana.key, perMutation: true)
            let acceptedOld = try await Self.push(server, older, token: ana.token, transport: transport)
            #expect(acceptedOld.status == 200, "\(acceptedOld)")
            #expect(try await Self.sql(server, "SELECT count(*) FROM record_history WHERE signature IS NOT NULL AND manifest_id IS NULL") == "1")
            // A device enrolled before signatures (no key) is taken unsigned, and the history says so.
            let legacy = try await Self.enrol(server, "cy", transport: transport, withKey: false)
            let unsignedLegacy = try await Self.push(server, PushRequest.deviceBytes(clientID: "cy-laptop", [Self.mutation(site: "Annex")]), token: legacy.token, transport: transport)
            #expect(unsignedLegacy.status == 200, "\(unsignedLegacy)")
            func register(_ key: String, token: String) async throws -> TransportResponse {
                try await transport.send(TransportRequest(
                    method: "POST", url: server.url + "/v1/projects/demo/device-key",
                    headers: ["Content-Type": "application/json", "Authorization": "Bearer \(token)"], body: Data(#"{"publicKey":"\#(key)"}"#.utf8)))
            }
            // A `user add` token keeps no key (several homes may share it): still taken unsigned.
            #expect(try await register(DeviceSigningKey().publicKey, token: oldToken).status == 204)
            let shared = try await Self.push(server, PushRequest.deviceBytes(clientID: "cy-script", [Self.mutation(site: "Store")]), token: oldToken, transport: transport)
            #expect(shared.status == 200, "\(shared)")
            // The enrolled device registers its key when it upgrades; that key stays: another one is refused.
            #expect(try await register(legacy.key.publicKey, token: legacy.token).status == 204)
            #expect(try await register(legacy.key.publicKey, token: legacy.token).status == 204)
            let other = try await register(DeviceSigningKey().publicKey, token: legacy.token)
            #expect(other.status == 409 && String(decoding: other.body, as: UTF8.self).contains("device-key-mismatch"))
            #expect(try await register("bm90IGEga2V5", token: legacy.token).status == 400)
            let nowUnsigned = try await Self.push(server, PushRequest.deviceBytes(clientID: "cy-laptop", [Self.mutation(site: "Annex 2")]), token: legacy.token, transport: transport)
            #expect(nowUnsigned.status == 403 && nowUnsigned.problem?.type == "https://fieldsheet.dev/problems/signature-required", "\(nowUnsigned)")

            // Every key kept is in the audit log, with the way it came; the key refused is too. The same key again
            // and the `user add` token's key (kept nowhere) are not.
            let registered = try await server.admin(["audit", "--project", "demo", "--action", "device-key.registered"])
            #expect(registered.status == 0, "\(registered.output)")
            let kept = registered.stdout.split(separator: "\n")
            #expect(kept.count == 3, "\(registered.output)")
            #expect(kept.filter { $0.contains(#""via":"login-code""#) }.count == 2, "\(registered.output)")
            #expect(kept.contains { $0.contains(#""via":"device-key""#) && $0.contains(legacy.key.publicKey) && $0.contains(#""subject":"cy""#) }, "\(registered.output)")
            #expect(kept.contains { $0.contains(ana.key.publicKey) && $0.contains(#""actor":"ana""#) }, "\(registered.output)")
            let refusedKey = try await server.admin(["audit", "--project", "demo", "--action", "device-key.refused"])
            #expect(refusedKey.stdout.split(separator: "\n").count == 1 && refusedKey.stdout.contains("another signing key"), "\(refusedKey.output)")

            let verified = try await Self.verify(server)
            #expect(verified.status == 0, "\(verified.output)")
            #expect(verified.stdout.contains("4 entries: 2 signed, 2 unsigned"), "\(verified.output)")
            #expect(verified.stdout.contains("\"ana-phone\" of ana\tsigned"), "\(verified.output)")

            // Ana's device is signed out: its signed pushes are refused from that moment.
            #expect(try await server.admin(["token", "revoke", "ana"]).status == 0)
            let after = try await Self.push(server, PushRequest.deviceBytes(clientID: "ana-phone", [Self.mutation(site: "Late")], signingKey: ana.key), token: ana.token, transport: transport)
            #expect(after.status == 401 && after.problem?.type == "https://fieldsheet.dev/problems/device-signed-out", "\(after)")
            // A signature the history holds from after the revocation (a push that raced it) does not count.
            _ = try await Self.sql(server, "UPDATE tokens SET revoked_at = revoked_at - 86400 WHERE revoked_at IS NOT NULL")
            let late = try await Self.verify(server)
            #expect(late.status == 0, "\(late.output)")
            #expect(late.stdout.contains("NOT COUNTING (signed after the device was signed out at"), "\(late.output)")
            #expect(late.stdout.contains("0 signed, 2 unsigned, 2 not counting"), "\(late.output)")
        }
    }
}

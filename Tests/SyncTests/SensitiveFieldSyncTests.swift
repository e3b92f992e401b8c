import FieldSheetTesting
import Foundation
import FormModel
import SyncClient
import SyncCore
import Testing

/// Sensitive fields end to end (docs/sensitive-fields.md): the real server on loopback (SQLite and PostgreSQL),
/// devices over libcurl, the admin commands. The answers are sealed on the device; the server stores, merges
/// and logs conflicts of ciphertext it cannot read; the export decrypts them with the key file.
struct SensitiveFieldSyncTests {
    static func intake(policy: ConflictPolicy = .lastWriterWins) -> FormDefinition {
        FormDefinition(id: "intake", version: 1, title: "Intake", completionLabel: "Save", conflictPolicy: policy, editableAfterSubmit: true, pages: [
            FormPage(id: "main", fields: [
                FieldDefinition(id: "name", kind: .text, label: "Name", required: true),
                FieldDefinition(id: "diagnosis", kind: .text, label: "Diagnosis", required: true, sensitive: true),
                FieldDefinition(id: "income", kind: .integer, label: "Monthly income", min: 0, constraint: ". < 1000000", sensitive: true),
            ]),
        ])
    }

    /// Every byte the server keeps, as text: the SQLite data directory's files (database, WAL, shared memory),
    /// or a `pg_dump` of the PostgreSQL database.
    static func serverBytes(_ fixture: SyncFixture) async throws -> String {
        if let database = fixture.server.database {
            let dump = try await Subprocess.run("/usr/lib/postgresql/15/bin/pg_dump", ["--no-owner", database], timeout: 60)
            guard dump.status == 0 else { throw FixtureError("pg_dump failed: \(dump.output)") }
            return dump.stdout
        }
        var text = ""
        let root = URL(fileURLWithPath: fixture.server.dataDirectory)
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            if let data = FileManager.default.contents(atPath: file.path) { text += String(decoding: data, as: UTF8.self) }
        }
        #expect(text.utf8.count > 10_000, "the data directory should hold the database files")
        return text
    }

    /// The conflict log (every entry) as an admin reads it over HTTP.
    static func conflictLog(_ fixture: SyncFixture, token: String) async throws -> [[String: Any]] {
        let transport = CurlTransport(options: TransportOptions())
        let response = try await transport.send(TransportRequest(
            method: "GET", url: "\(fixture.server.url)/v1/projects/\(fixture.project)/conflicts?state=all",
            headers: ["Authorization": "Bearer \(token)"]))
        #expect(response.status == 200)
        let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        return object?["conflicts"] as? [[String: Any]] ?? []
    }

    /// Sends `method` to the project's `path` with a JSON body as `token`; returns the status and body.
    static func request(_ fixture: SyncFixture, _ method: String, _ path: String, token: String, json: String) async throws -> (Int, String) {
        let response = try await CurlTransport(options: TransportOptions()).send(TransportRequest(
            method: method, url: "\(fixture.server.url)/v1/projects/\(fixture.project)/\(path)",
            headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"], body: Data(json.utf8)))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// The sealed answers in a JSON object of the conflict log (`server` and `client` sides).
    static func sealedValues(in entry: [String: Any]) throws -> [SealedAnswer] {
        try ["server", "client"].compactMap { side in
            guard let state = entry[side] as? [String: Any], let value = state["value"] as? [String: Any], let sealed = value["sealed"] else { return nil }
            return try JSONDecoder().decode(SealedAnswer.self, from: JSONSerialization.data(withJSONObject: sealed))
        }
    }

    @Test(arguments: ServerBackend.available)
    func twoDevicesEditOneSensitiveFieldOfflineAndTheServerHoldsOnlyCiphertext(backend: ServerBackend) async throws {
        try await backend.withDatabase { database in
            let fixture = try await SyncFixture(forms: [Self.intake()], database: database)
            let keyDirectory = TemporaryDirectory("keys")
            defer { withExtendedLifetime(keyDirectory) {} }  // the directory is removed when released
            let keyFile = keyDirectory.file("field.key")
            let created = try await fixture.server.admin(["project", "key", "create", fixture.project, "--out", keyFile])
            #expect(created.stdout.contains("created key"))
            let attributes = try FileManager.default.attributesOfItem(atPath: keyFile)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let privateKey = try ProjectPrivateKey(fileBytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: keyFile))), file: keyFile)
            // A second `create` into the same file is refused: a key file is never overwritten.
            let again = try await Subprocess.run(fixture.server.binary, ["project", "key", "create", fixture.project, "--out", keyFile] + fixture.server.storageArguments)
            #expect(again.status != 0 && again.stderr.contains("exists already"), "\(again.output)")

            let alice = try await fixture.user("alice")
            let admin = try await fixture.user("ada", role: "admin")
            let (phone, tablet) = (try fixture.device(token: alice), try fixture.device(token: alice))
            try await phone.sync()
            #expect(try await phone.store.projectKey()?.id == privateKey.id)
            let id = try await phone.fill("intake", ["name": .text("Household 7"), "diagnosis": .text("PLAINMARK-first"), "income": .integer(48_213)], submit: true)
            try await phone.sync()
            try await tablet.sync()
            // The author keeps what it typed; the other device receives only ciphertext.
            #expect(try await phone.values(id)["diagnosis"] == .text("PLAINMARK-first"))
            #expect(try await phone.values(id)["income"] == .integer(48_213))
            let onTablet = try await tablet.values(id)["diagnosis"]
            guard case .sealed(let pulled)? = onTablet else {
                Issue.record("the tablet should hold the diagnosis sealed, not \(String(describing: onTablet))")
                return
            }
            #expect(pulled.key == privateKey.id)
            #expect(try await tablet.values(id)["name"] == .text("Household 7"))

            // Both edit the diagnosis offline; the tablet's edit is later and wins (last writer wins).
            try await phone.edit(id, ["diagnosis": .text("PLAINMARK-phone")])
            try await tablet.edit(id, ["diagnosis": .text("PLAINMARK-tablet")])
            try await phone.sync()
            #expect(try await tablet.sync().conflicts == 1)
            try await phone.sync()
            #expect(try await tablet.values(id)["diagnosis"] == .text("PLAINMARK-tablet"))
            // The tablet's own side of the conflict it logged reads as what it typed, not as its ciphertext.
            let logged = try await tablet.store.conflicts().first { $0.fieldID == "diagnosis" }
            #expect(logged?.mine == .text("PLAINMARK-tablet"), "\(String(describing: logged))")
            guard case .sealed? = try await phone.values(id)["diagnosis"] else {
                Issue.record("the phone should see the tablet's winning diagnosis sealed")
                return
            }
            // The phone learns of its loss from the pulled conflict entry: its own side reads as what it typed
            // (it holds that plaintext), the tablet's winning side stays sealed.
            let lost = try await phone.store.conflicts().first { $0.fieldID == "diagnosis" }
            #expect(lost?.mine == .text("PLAINMARK-phone"), "\(String(describing: lost))")
            guard case .sealed? = lost?.theirs else {
                Issue.record("the phone's conflict entry should hold the tablet's side sealed, not \(String(describing: lost?.theirs))")
                return
            }

            // No plaintext of any sensitive answer anywhere in the server's database; the other answers are there.
            let stored = try await Self.serverBytes(fixture)
            #expect(!stored.contains("PLAINMARK"))
            #expect(!stored.contains("\"integer\":48213"))
            #expect(stored.contains("Household 7"))

            // The conflict log keeps both ciphertexts; the key opens each to what its device typed.
            let entries = try await Self.conflictLog(fixture, token: admin).filter { $0["fieldId"] as? String == "diagnosis" }
            #expect(entries.count == 1)
            let sealed = try entries.flatMap(Self.sealedValues)
            #expect(sealed.count == 2)
            let opened = try Set(sealed.map { try AnswerSealing.open($0, with: privateKey, record: id.uuidString.lowercased(), path: "diagnosis") })
            #expect(opened == [.text("PLAINMARK-phone"), .text("PLAINMARK-tablet")])
            // A sealed answer moved to another field does not open.
            #expect(throws: SealingError.self) { try AnswerSealing.open(sealed[0], with: privateKey, record: id.uuidString.lowercased(), path: "income") }

            // The export decrypts with the key file; without it, it says which answers are sealed and to which key.
            let decrypted = try await fixture.server.admin(["form", "export", "--project", fixture.project, "--form", "intake", "--format", "jsonl", "--decrypt-with", keyFile])
            #expect(decrypted.stdout.contains("\"diagnosis\":{\"text\":\"PLAINMARK-tablet\"}"), "\(decrypted.output)")
            #expect(decrypted.stdout.contains("\"income\":{\"integer\":48213}"), "\(decrypted.output)")
            #expect(decrypted.stderr.contains("decrypted 2 sensitive answers"), "\(decrypted.output)")
            let csv = try await fixture.server.admin(["export", "--project", fixture.project, "--form", "intake"])
            #expect(!csv.stdout.contains("PLAINMARK"))
            #expect(csv.stdout.contains("sensitive — encrypted (key \(privateKey.id))"), "\(csv.output)")
            #expect(csv.stderr.contains("2 sensitive answers are still sealed to key \(privateKey.id)"), "\(csv.output)")
        }
    }

    @Test(arguments: ServerBackend.available)
    func anOfficeResolvesAndReviewsASensitiveConflictWithoutReadingIt(backend: ServerBackend) async throws {
        try await backend.withDatabase { database in
            let fixture = try await SyncFixture(forms: [Self.intake(policy: .manual)], database: database)
            let keys = TemporaryDirectory("keys")
            defer { withExtendedLifetime(keys) {} }  // the directory is removed when released
            let keyFile = keys.file("field.key")
            try await fixture.server.admin(["project", "key", "create", fixture.project, "--out", keyFile])
            let alice = try await fixture.user("alice")
            let admin = try await fixture.user("ada", role: "admin")
            let (phone, tablet) = (try fixture.device(token: alice), try fixture.device(token: alice))
            try await phone.sync()
            let id = try await phone.fill("intake", ["name": .text("Household 9"), "diagnosis": .text("PLAINMARK-a")], submit: true)
            try await phone.sync()
            try await tablet.sync()
            try await phone.edit(id, ["diagnosis": .text("PLAINMARK-phone")])
            try await tablet.edit(id, ["diagnosis": .text("PLAINMARK-tablet")])
            try await phone.sync()
            try await tablet.sync()
            // Manual: the phone's value stands and the conflict waits for a person, who keeps the tablet's.
            let open = try await Self.conflictLog(fixture, token: admin).filter { $0["open"] as? Bool == true }
            let conflict = try #require(open.first?["id"] as? Int, "\(open)")
            let (resolved, body) = try await Self.request(fixture, "POST", "conflicts/\(conflict)/resolve", token: admin, json: #"{"keep": "client"}"#)
            #expect(resolved == 200, "\(body)")
            let (reviewed, review) = try await Self.request(fixture, "POST", "records/\(id.uuidString.lowercased())/review", token: admin, json: #"{"state": "approved", "comment": "ok"}"#)
            #expect(reviewed == 200, "\(review)")
            try await phone.sync()
            try await tablet.sync()
            #expect(try await tablet.values(id)["diagnosis"] == .text("PLAINMARK-tablet"))
            let exported = try await fixture.server.admin(["export", "--project", fixture.project, "--form", "intake", "--format", "jsonl", "--decrypt-with", keyFile])
            #expect(exported.stdout.contains("\"diagnosis\":{\"text\":\"PLAINMARK-tablet\"}") && exported.stdout.contains("\"reviewState\":\"approved\""), "\(exported.output)")
            #expect(!(try await Self.serverBytes(fixture)).contains("PLAINMARK"))
        }
    }

    @Test func aRotatedKeySealsNewAnswersAndOldAnswersOpenWithTheOldKey() async throws {
        let fixture = try await SyncFixture(forms: [Self.intake()])
        let keys = TemporaryDirectory("keys")
        defer { withExtendedLifetime(keys) {} }  // the directory is removed when released
        let (oldFile, newFile) = (keys.file("old.key"), keys.file("new.key"))
        try await fixture.server.admin(["project", "key", "create", fixture.project, "--out", oldFile])
        let alice = try await fixture.user("alice")
        let phone = try fixture.device(token: alice)
        try await phone.sync()
        let first = try await phone.fill("intake", ["name": .text("Before"), "diagnosis": .text("PLAINMARK-old")], submit: true)
        try await phone.sync()
        try await fixture.server.admin(["project", "key", "create", fixture.project, "--out", newFile])
        let listed = try await fixture.server.admin(["project", "key", "list", fixture.project]).stdout.split(separator: "\n")
        #expect(listed.count == 2)
        #expect(listed.last?.hasSuffix("current") == true)
        let newKey = try ProjectPrivateKey(fileBytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: newFile))), file: newFile)
        let oldKey = try ProjectPrivateKey(fileBytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: oldFile))), file: oldFile)
        #expect(newKey.id != oldKey.id)
        try await phone.sync()
        #expect(try await phone.store.projectKey()?.id == newKey.id)
        let second = try await phone.fill("intake", ["name": .text("After"), "diagnosis": .text("PLAINMARK-new")], submit: true)
        try await phone.sync()

        let onlyNew = try await fixture.server.admin(["export", "--project", fixture.project, "--form", "intake", "--format", "jsonl", "--decrypt-with", newFile])
        #expect(onlyNew.stdout.contains("PLAINMARK-new"))
        #expect(!onlyNew.stdout.contains("PLAINMARK-old"))
        #expect(onlyNew.stderr.contains("1 sensitive answer is still sealed to key \(oldKey.id)"), "\(onlyNew.output)")
        let both = try await fixture.server.admin(["export", "--project", fixture.project, "--form", "intake", "--format", "jsonl", "--decrypt-with", newFile, "--decrypt-with", oldFile])
        #expect(both.stdout.contains("PLAINMARK-new") && both.stdout.contains("PLAINMARK-old"), "\(both.output)")
        #expect(!both.stderr.contains("still sealed"))
        #expect(first != second)
    }

    @Test func withoutAProjectKeyASensitiveAnswerStaysOnTheDeviceAndTheSyncSaysWhy() async throws {
        let fixture = try await SyncFixture(forms: [Self.intake()])
        let alice = try await fixture.user("alice")
        let phone = try fixture.device(token: alice)
        try await phone.sync()
        #expect(try await phone.store.projectKey() == nil)
        let id = try await phone.fill("intake", ["name": .text("No key yet"), "diagnosis": .text("PLAINMARK-waiting")], submit: true)
        // Another record of the same form, a draft with no sensitive answer yet, needs no key.
        let other = try await phone.fill("intake", ["name": .text("Nothing sensitive")])
        do {
            try await phone.sync()
            Issue.record("a sync without a project key should not send the sensitive answer")
        } catch let error as SyncError {
            #expect(error.code == .noProjectKey, "\(error)")
            #expect(error.message.contains("1 record stays on this device") && error.message.contains("project key create"), "\(error)")
            #expect(error.message.contains("Everything else was sent (1 record this sync)"), "\(error)")
        }
        // Only the record with the sensitive answer waits; the other one reached the server.
        #expect(try await phone.store.syncStatus().queuedRecords == 1)
        let before = try await Self.serverBytes(fixture)
        #expect(before.contains("Nothing sensitive") && before.contains(other.uuidString.lowercased()), "the other record reached the server")
        #expect(!before.contains("No key yet") && !before.contains(id.uuidString.lowercased()), "the held record is not on the server")
        let keys = TemporaryDirectory("keys")
        defer { withExtendedLifetime(keys) {} }  // the directory is removed when released
        try await fixture.server.admin(["project", "key", "create", fixture.project, "--out", keys.file("field.key")])
        try await phone.sync()
        #expect(try await phone.store.syncStatus().queuedRecords == 0)
        let stored = try await Self.serverBytes(fixture)
        #expect(!stored.contains("PLAINMARK"))
        #expect(try await phone.values(id)["diagnosis"] == .text("PLAINMARK-waiting"))
    }
}

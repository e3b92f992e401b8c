import FieldSheetTesting
import Foundation
import Testing

/// Drafts across form versions, with two real processes: the server on loopback and the `fieldsheet` CLI as
/// the device. A draft of version 1 answers a field version 2 drops (and one inside a repeat); version 2 is
/// published with `fieldsheet-server form publish`; after a sync the draft opens on version 2 with the carried
/// answers, the dropped ones shown once; it is submitted there, and the server's history says which version
/// each change was made against, the dropped answer kept in it.
struct DraftVersionCLITests {
    static func inspection(version: Int) -> String {
        let fields = version == 1
            ? """
              { "id": "site", "kind": "text", "label": "Site" },
              { "id": "gate_code", "kind": "text", "label": "Gate code" },
              { "id": "rooms", "kind": "repeat", "label": "Rooms", "instanceLabel": "Room", "fields": [
                { "id": "name", "kind": "text", "label": "Name" },
                { "id": "rating", "kind": "integer", "label": "Rating" } ] }
              """
            : """
              { "id": "site", "kind": "text", "label": "Site", "required": true },
              { "id": "phone", "kind": "text", "label": "Phone", "required": true },
              { "id": "rooms", "kind": "repeat", "label": "Rooms", "instanceLabel": "Room", "fields": [
                { "id": "name", "kind": "text", "label": "Name" } ] }
              """
        return """
            { "id": "inspection", "version": \(version), "title": "Inspection", "completionLabel": "Submit",
              "pages": [ { "id": "p", "fields": [ \(fields) ] } ] }
            """
    }

    /// `GET path` of the sync API as `token`, through the curl command line; the JSON object answered.
    static func get(_ server: ServerProcess, _ token: String, _ path: String) async throws -> [String: Any] {
        let result = try await Subprocess.run("/usr/bin/curl", ["-sf", "-H", "Authorization: Bearer \(token)", server.url + path], timeout: 30)
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.output)")
    }

    @Test(arguments: ServerBackend.available)
    func aDraftOfVersion1OpensOnVersion2AndTheHistoryNamesEachChangesVersion(backend: ServerBackend) async throws {
        try await backend.withDatabase { database in
            let server = ServerProcess(database: database)
            try await server.createProject("demo")
            let rita = try await server.addUser("rita", project: "demo", role: "admin")
            let token = try await server.addUser("ana", project: "demo")
            try await server.publish(json: Self.inspection(version: 1), project: "demo")
            try await server.start(port: 0)
            let phone = CLIHome()
            let login = try await Subprocess.run(CLIHome.binary, ["--home", phone.home, "login", server.url, "--project", "demo"], environment: ["FIELDSHEET_TOKEN": token])
            #expect(login.status == 0, "\(login.output)")
            #expect(try await phone.run("sync").status == 0)

            let fill = try await phone.run([
                "fill", "inspection", "--set", "site=Depot", "--set", "gate_code=4711", "--set", "rooms[1].name=Boiler room", "--set", "rooms[1].rating=4", "--dismiss",
            ])
            #expect(fill.status == 3, "\(fill.output)")
            let record = try #require(CLIHome.recordID(fill))

            // Version 2 drops the gate code and the rooms' rating, and asks for a phone number.
            let published = try await server.admin(["form", "publish", server.data.write("inspection-v2.json", Self.inspection(version: 2)), "--project", "demo"])
            #expect(published.output.contains("version 2"), "\(published.output)")
            let sync = try await phone.run("sync")
            #expect(sync.status == 0, "\(sync.output)")

            let opened = try await phone.run(["resume", record, "--dismiss"])
            #expect(opened.status == 3, "\(opened.output)")
            #expect(opened.stderr.contains(
                "This draft moved from version 1 to version 2 of the form inspection. These answers are not in version 2 of the form: Gate code: 4711; Room 1 › Rating: 4. They stay in the record's history on the server."),
                "\(opened.output)")
            let shown = try await phone.run(["show", record])
            #expect(shown.stdout.contains("Boiler room") && shown.stdout.contains("Depot"), "the carried answers: \(shown.output)")
            #expect(!shown.stdout.contains("4711"), "\(shown.output)")

            let submitted = try await phone.run(["resume", record, "--set", "phone=555-0100", "--complete"])
            #expect(submitted.status == 0, "\(submitted.output)")
            #expect(!submitted.stderr.contains("not in version 2"), "shown once: \(submitted.output)")
            let pushed = try await phone.run("sync")
            #expect(pushed.status == 0, "\(pushed.output)")

            let snapshot = try await Self.get(server, rita, "/v1/projects/demo/records/\(record)")
            #expect(snapshot["formVersion"] as? Int == 2, "\(snapshot)")
            #expect(snapshot["state"] as? String == "submitted", "\(snapshot)")
            let history = try #require(try await Self.get(server, rita, "/v1/projects/demo/records/\(record)/history")["history"] as? [[String: Any]])
            let changes = history.filter { $0["kind"] as? String == "change" }
            #expect(changes.map { $0["version"] as? Int } == [1, 2], "\(history)")
            let onVersion1 = changes.first?["fields"] as? [String: [String: Any]]
            #expect((onVersion1?["gate_code"]?["to"] as? [String: String]) == ["text": "4711"], "the dropped answer stays in the history: \(history)")
            let onVersion2 = changes.last
            #expect((onVersion2?["state"] as? [String: String])?["to"] == "submitted", "\(history)")
            let cleared = (onVersion2?["fields"] as? [String: [String: Any]])?["gate_code"]
            #expect((cleared?["from"] as? [String: String]) == ["text": "4711"] && cleared?["to"] == nil, "\(history)")
            #expect(((onVersion2?["fields"] as? [String: [String: Any]])?["phone"]?["to"] as? [String: String]) == ["text": "555-0100"], "\(history)")
            await server.stop()
        }
    }
}

import FieldSheetTesting
import Foundation
import Testing

/// Repeat instances on two devices through the real server on loopback, driven by `fieldsheet` as a script
/// would: instances added offline on both are both kept, a removal is a tombstone, an edit of an instance removed
/// elsewhere restores it, conflicts name the instance and the field, and the server exports one CSV per repeat.
struct RepeatSyncCLITests {
    static let form = PackagePaths.file("Schema/forms/defect-inspection.json")

    /// A record's answers as `show --json` prints them.
    static func answers(_ home: CLIHome, _ id: String) async throws -> [String: Any] {
        let shown = try await home.run(["show", id, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
        return try #require(object?["answers"] as? [String: Any], "\(shown.output)")
    }

    /// The locations of the live defects, in order.
    static func locations(_ home: CLIHome, _ id: String) async throws -> [String] {
        let answers = try await Self.answers(home, id)
        var instances: [(position: Int, id: String, location: String)] = []
        for (key, value) in answers where key.hasSuffix("/@position") {
            let instance = String(key.dropFirst("defects/".count).dropLast("/@position".count))
            if let removed = answers["defects/\(instance)/@removed"] as? [String: Bool], removed["boolean"] == true { continue }
            let position = ((value as? [String: Int])?["integer"]) ?? 0
            let location = ((answers["defects/\(instance)/location"] as? [String: String])?["text"]) ?? ""
            instances.append((position, instance, location))
        }
        return instances.sorted { ($0.position, $0.id) < ($1.position, $1.id) }.map(\.location)
    }

    static func defect(_ index: Int, _ location: String, severity: String = "low", action: String = "note") -> [String] {
        ["--set", "defects[\(index)].location=\(location)", "--set", "defects[\(index)].severity=\(severity)", "--set", "defects[\(index)].action=\(action)"]
    }

    @Test func instancesMergeAcrossTwoDevicesThroughTheServer() async throws {
        let server = ServerProcess()
        try await server.createProject("demo")
        let token = try await server.addUser("alice", project: "demo")
        try await server.admin(["form", "publish", Self.form, "--project", "demo"])
        try await server.start(port: 0)
        let (phone, tablet) = (CLIHome(), CLIHome())
        for home in [phone, tablet] {
            let login = try await Subprocess.run(CLIHome.binary, ["--home", home.home, "login", server.url, "--project", "demo"], environment: ["FIELDSHEET_TOKEN": token])
            #expect(login.status == 0, "\(login.output)")
        }
        let fill = try await phone.run(["fill", "defect-inspection", "--set", "site=Depot"] + Self.defect(1, "Roof") + ["--complete"])
        #expect(fill.status == 0, "\(fill.output)")
        let id = try #require(CLIHome.recordID(fill))
        #expect(try await phone.run("sync").status == 0)
        #expect(try await tablet.run("sync").stdout == "pushed 0, pulled 1, 0 conflicts\n")

        // Offline, each device adds a second defect: both are kept.
        #expect(try await phone.run(["edit", id] + Self.defect(2, "Cellar") + ["--complete"]).status == 0)
        #expect(try await tablet.run(["edit", id] + Self.defect(2, "Gate", severity: "high", action: "close_site") + ["--set", "defects[2].urgent_note=Gate hangs loose", "--complete"]).status == 0)
        #expect(try await phone.run("sync").status == 0)
        let tabletSync = try await tablet.run("sync")
        #expect(tabletSync.stdout.hasSuffix("0 conflicts\n"), "\(tabletSync.output)")
        #expect(try await phone.run("sync").status == 0)
        let both = try await Self.locations(phone, id)
        #expect(both.count == 3 && both[0] == "Roof" && Set(both) == ["Roof", "Cellar", "Gate"], "\(both)")
        #expect(try await Self.locations(tablet, id) == both)

        // The phone removes the first defect while the tablet, offline, edits it: the edit restores it.
        #expect(try await phone.run(["edit", id, "--remove", "defects[1]", "--complete"]).status == 0)
        #expect(try await phone.run("sync").status == 0)
        #expect(try await Self.locations(phone, id) == Array(both.dropFirst()))
        #expect(try await tablet.run(["edit", id, "--set", "defects[1].location=Roof east", "--complete"]).status == 0)
        #expect(try await tablet.run("sync").status == 0)
        #expect(try await Self.locations(tablet, id) == ["Roof east"] + both.dropFirst(), "the device that restored it sees it restored")
        #expect(try await phone.run("sync").status == 0)
        let restored = try await Self.locations(phone, id)
        #expect(restored == ["Roof east"] + both.dropFirst(), "\(restored)")

        // A removal nobody contests stays: the tablet removes the Cellar defect.
        let cellar = try #require(try await Self.locations(tablet, id).firstIndex(of: "Cellar"))
        #expect(try await tablet.run(["edit", id, "--remove", "defects[\(cellar + 1)]", "--complete"]).status == 0)
        #expect(try await tablet.run("sync").status == 0)
        #expect(try await phone.run("sync").status == 0)
        #expect(try await Self.locations(phone, id) == ["Roof east", "Gate"])

        // Both change the same instance's cost (the form's policy is manual): the conflict names the instance and the field.
        #expect(try await phone.run(["edit", id, "--set", "defects[1].cost=100", "--complete"]).status == 0)
        #expect(try await tablet.run(["edit", id, "--set", "defects[1].cost=200", "--complete"]).status == 0)
        #expect(try await phone.run("sync").status == 0)
        let conflicted = try await tablet.run("sync")
        #expect(conflicted.stdout.contains("1 conflict (1 open"), "\(conflicted.output)")
        let open = try await tablet.run("conflicts")
        #expect(open.stdout.contains("/cost (Defect 1 › Repair cost)  open"), "\(open.output)")
        #expect(open.stdout.contains("mine:   \"200\""), "\(open.output)")

        // The server's CSV export: one file for the records, one for the defects keyed to their record.
        let exportDirectory = server.data.file("export")
        let export = try await server.admin(["export", "--project", "demo", "--form", "defect-inspection", "--output-dir", exportDirectory])
        #expect(export.stderr.contains("exported 1 record"), "\(export.output)")
        let records = try String(contentsOfFile: exportDirectory + "/defect-inspection.csv", encoding: .utf8)
        let defects = try String(contentsOfFile: exportDirectory + "/defect-inspection-defects.csv", encoding: .utf8)
        #expect(records.hasPrefix("recordId,formVersion,state,author,revision,reviewState,reviewComment,device,createdAt,submittedAt,updatedAt,receivedAt,site,inspected_on,next_visit,defect_count,total_cost,high_count,summary\r\n"), "\(records)")
        #expect(records.contains(",2,"), "the computed defect count: \(records)")
        let rows = defects.split(separator: "\r\n")
        #expect(rows.first == "recordId,parentInstanceId,instanceId,position,location,severity,action,cost,urgent_note,photo")
        #expect(rows.count == 3, "\(defects)")
        #expect(rows.dropFirst().allSatisfy { $0.lowercased().hasPrefix(id.lowercased() + ",,") }, "\(defects)")
        #expect(rows.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false)[4] } == ["Roof east", "Gate"])
        let lines = try await server.admin(["export", "--project", "demo", "--form", "defect-inspection", "--format", "jsonl"])
        #expect(lines.stdout.contains("\"repeats\":{\"defects\":[{\"instanceId\""), "\(lines.stdout)")
    }

    /// Kept calculations (once(), uuid()) through the real server: the device stores them with the record, the
    /// server accepts them, and the other device and the export read the same values, never computed again.
    @Test func keptCalculationsTravelWithTheRecord() async throws {
        let server = ServerProcess()
        try await server.createProject("demo")
        let token = try await server.addUser("alice", project: "demo")
        let formFile = server.data.file("kept.json")
        try #"""
        { "id": "kept", "version": 1, "title": "Kept", "completionLabel": "Save", "editableAfterSubmit": true,
          "pages": [{ "id": "main", "fields": [
            { "id": "name", "kind": "text", "label": "Name" },
            { "id": "first_name", "kind": "calculate", "label": "First name", "calculation": "once(name)" },
            { "id": "key", "kind": "calculate", "label": "Key", "calculation": "uuid()" }] }] }
        """#.write(toFile: formFile, atomically: true, encoding: .utf8)
        let publish = try await server.admin(["form", "publish", formFile, "--project", "demo"])
        #expect(publish.status == 0, "\(publish.output)")
        try await server.start(port: 0)
        let (phone, tablet) = (CLIHome(), CLIHome())
        for home in [phone, tablet] {
            let login = try await Subprocess.run(CLIHome.binary, ["--home", home.home, "login", server.url, "--project", "demo"], environment: ["FIELDSHEET_TOKEN": token])
            #expect(login.status == 0, "\(login.output)")
        }
        #expect(try await phone.run("sync").status == 0)
        let fill = try await phone.run(["fill", "kept", "--set", "name=Ann", "--complete"])
        #expect(fill.status == 0, "\(fill.output)")
        let id = try #require(CLIHome.recordID(fill))
        let onPhone = try await Self.answers(phone, id)
        let key = try #require((onPhone["key"] as? [String: String])?["text"], "\(onPhone)")
        #expect((onPhone["first_name"] as? [String: String])?["text"] == "Ann")
        #expect(try await phone.run(["edit", id, "--set", "name=Bob", "--complete"]).status == 0)
        let push = try await phone.run("sync")
        #expect(push.status == 0 && push.stdout.hasPrefix("pushed 1,"), "\(push.output)")
        #expect(try await tablet.run("sync").status == 0)
        let onTablet = try await Self.answers(tablet, id)
        #expect((onTablet["key"] as? [String: String])?["text"] == key, "\(onTablet)")
        #expect((onTablet["first_name"] as? [String: String])?["text"] == "Ann", "once(): the first name given")
        let exported = try await server.admin(["export", "--project", "demo", "--form", "kept", "--format", "jsonl"])
        #expect(exported.stdout.contains("\"key\":{\"text\":\"\(key)\"}") || exported.stdout.contains(key), "\(exported.output)")
        #expect(exported.stdout.contains("Ann") && exported.stdout.contains("Bob"), "\(exported.output)")
    }
}

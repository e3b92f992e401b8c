import FieldSheetTesting
import Foundation
import Testing

/// `fieldsheet entities` as a script uses it, with the real server on loopback: the lists a device's forms
/// use, a list's entities in label order (the household registered offline on this device among those the
/// server sent), search, a limit, JSON lines, and a clear refusal of a list no form uses.
struct EntityCLITests {
    static let registration = PackagePaths.file("Schema/forms/household-registration.json")
    static let visit = PackagePaths.file("Schema/forms/household-visit.json")

    @Test func aDeviceListsItsEntitiesWithTheOnesRegisteredOfflineAmongThem() async throws {
        let server = ServerProcess()
        try await server.createProject("demo")
        _ = try await server.addUser("rita", project: "demo", role: "admin")
        let token = try await server.addUser("ana", project: "demo")
        for form in [Self.registration, Self.visit] {
            try await server.admin(["form", "publish", form, "--project", "demo"])
        }
        let csv = server.data.write("households.csv", """
            name,label,village,head_name,members
            00000000-0000-4000-8000-000000000001,Amani · Hill,Hill,Amani,4
            00000000-0000-4000-8000-000000000002,Zuri · Lake,Lake,Zuri,2

            """)
        try await server.admin(["entities", "import", csv, "--project", "demo", "--list", "households", "--user", "rita"])
        try await server.start(port: 0)
        let phone = CLIHome()
        let login = try await Subprocess.run(CLIHome.binary, ["--home", phone.home, "login", server.url, "--project", "demo"], environment: ["FIELDSHEET_TOKEN": token])
        #expect(login.status == 0, "\(login.output)")
        #expect(try await phone.run("sync").status == 0)

        // Registered offline: the device lists it before any sync.
        let fill = try await phone.run([
            "fill", "household-registration", "--set", "village=Hill", "--set", "head_name=Baraka", "--set", "members=3", "--complete",
        ])
        #expect(fill.status == 0, "\(fill.output)")
        let registered = try #require(CLIHome.recordID(fill))

        let lists = try await phone.run("entities")
        #expect(lists.status == 0 && lists.stdout == "households\n", "\(lists.output)")
        let all = try await phone.run(["entities", "households"])
        #expect(all.status == 0, "\(all.output)")
        let rows = all.stdout.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.map { $0[1] } == ["Amani · Hill", "Baraka · Hill", "Zuri · Lake"], "\(all.output)")
        #expect(rows.first?[0] == "00000000-0000-4000-8000-000000000001")
        #expect(rows.first?[2] == "head_name=Amani; members=4; village=Hill", "\(all.output)")
        #expect(rows[1][0] == registered.lowercased(), "the household is the registration record's entity")

        let found = try await phone.run(["entities", "households", "--search", "hill", "--limit", "1"])
        #expect(found.stdout.split(separator: "\n").map { $0.split(separator: "\t")[1] } == ["Amani · Hill"], "\(found.output)")
        let json = try await phone.run(["entities", "households", "--search", "zuri", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.output)")
        #expect(object["label"] as? String == "Zuri · Lake")
        #expect((object["properties"] as? [String: Any])?["members"] as? [String: Int] == ["integer": 2], "\(json.output)")
        let none = try await phone.run(["entities", "households", "--search", "nobody"])
        #expect(none.status == 0 && none.stdout.isEmpty, "\(none.output)")

        let unknown = try await phone.run(["entities", "patients"])
        #expect(unknown.status == 1, "\(unknown.output)")
        #expect(unknown.stderr.contains("No form on this device uses the list patients; the lists are households."), "\(unknown.output)")
        let badLimit = try await phone.run(["entities", "households", "--limit", "0"])
        #expect(badLimit.status != 0 && badLimit.stderr.contains("--limit 0"), "\(badLimit.output)")
    }
}

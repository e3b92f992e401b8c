import FieldSheetTesting
import Foundation
import Testing

/// `fieldsheet login`, `sync`, `status`, `conflicts` and `resolve`, run as a person would, against the real server.
struct SyncCLITests {
    static let followUpJob = PackagePaths.file("Schema/forms/follow-up-job.json")

    func server() async throws -> (ServerProcess, String) {
        let server = ServerProcess()
        try await server.createProject("demo")
        let token = try await server.addUser("alice", project: "demo")
        try await server.admin(["form", "publish", Self.followUpJob, "--project", "demo"])
        try await server.start(port: 0)
        return (server, token)
    }

    @Test func loginKeepsTheTokenPrivateAndSyncStatusConflictsResolveWork() async throws {
        let (server, token) = try await server()
        let (phone, tablet) = (CLIHome(), CLIHome())
        for home in [phone, tablet] {
            let login = try await Subprocess.run(CLIHome.binary, ["--home", home.home, "login", server.url, "--project", "demo"], environment: ["FIELDSHEET_TOKEN": token])
            #expect(login.status == 0, "\(login.output)")
            #expect(!login.stdout.contains(token) && !login.stderr.contains(token))
            let attributes = try FileManager.default.attributesOfItem(atPath: home.directory.file("home/login.json"))
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
        }
        let fill = try await phone.run(["fill", "follow-up-job", "--set", "site=B2", "--set", "technicians=2", "--complete"])
        #expect(fill.status == 0, "\(fill.output)")
        let id = try #require(CLIHome.recordID(fill))
        let status = try await phone.run("status")
        #expect(status.stdout.contains("in 1 record"), "\(status.output)")
        let sync = try await phone.run("sync")
        #expect(sync.status == 0, "\(sync.output)")
        #expect(sync.stdout == "pushed 1, pulled 0, 0 conflicts\n")
        #expect(try await tablet.run("sync").stdout == "pushed 0, pulled 1, 0 conflicts\n")
        #expect(try await phone.run(["edit", id, "--set", "priority=low", "--complete"]).status == 0)
        #expect(try await tablet.run(["edit", id, "--set", "priority=high", "--set", "reason=Flooded", "--complete"]).status == 0)
        #expect(try await phone.run("sync").status == 0)
        let conflicted = try await tablet.run("sync")
        #expect(conflicted.stdout.hasPrefix("pushed 1, pulled 1, 1 conflict (1 open"), "\(conflicted.output)")
        let conflicts = try await tablet.run("conflicts")
        #expect(conflicts.stdout.contains("priority (Priority)  open"), "\(conflicts.output)")
        #expect(conflicts.stdout.contains("mine:   \"High\""))
        #expect(conflicts.stdout.contains("theirs: \"Low\""))
        let resolve = try await tablet.run(["resolve", id, "priority", "--mine"])
        #expect(resolve.status == 0, "\(resolve.output)")
        #expect(try await tablet.run("sync").status == 0)
        #expect(try await phone.run("sync").status == 0)
        let shown = try await phone.run(["show", id, "--json"])
        #expect(shown.stdout.contains("\"high\""), "\(shown.output)")
        #expect(try await tablet.run("conflicts").stdout == "no open conflicts\n")
    }

    @Test func syncWithoutAServerSaysWhyAndKeepsEverythingQueued() async throws {
        let (server, token) = try await server()
        let phone = CLIHome()
        #expect(try await Subprocess.run(CLIHome.binary, ["--home", phone.home, "login", server.url, "--project", "demo", "--token", token]).status == 0)
        #expect(try await phone.run(["fill", "follow-up-job", "--set", "site=B2", "--complete"]).status == 0)
        await server.stop()
        let sync = try await phone.run(["sync", "--timeout", "1"])
        #expect(sync.status == 3, "\(sync.output)")
        #expect(sync.stderr.contains("Could not reach the server"))
        #expect(sync.stderr.contains("stay queued"))
        #expect(try await phone.run("status").stdout.contains("in 1 record"))
        let notLoggedIn = try await CLIHome().run("sync")
        #expect(notLoggedIn.status == 2)
        #expect(notLoggedIn.stderr.contains("fieldsheet login"))
    }

    @Test func theProxyEnvironmentVariablesAreHonoured() async throws {
        let (server, token) = try await server()
        let phone = CLIHome()
        #expect(try await Subprocess.run(CLIHome.binary, ["--home", phone.home, "login", server.url, "--project", "demo", "--token", token]).status == 0)
        // A proxy that is not there: the sync goes to it (and fails) instead of to the server…
        let viaProxy = try await Subprocess.run(CLIHome.binary, ["--home", phone.home, "sync", "--timeout", "1"], environment: ["http_proxy": "http://127.0.0.1:9", "no_proxy": ""])
        #expect(viaProxy.status == 3, "\(viaProxy.output)")
        // …unless no_proxy exempts the server's host.
        let exempt = try await Subprocess.run(CLIHome.binary, ["--home", phone.home, "sync", "--timeout", "1"], environment: ["http_proxy": "http://127.0.0.1:9", "no_proxy": "127.0.0.1"])
        #expect(exempt.status == 0, "\(exempt.output)")
    }
}

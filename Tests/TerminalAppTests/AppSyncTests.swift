import DraftStore
import FieldSheetTesting
import Foundation
import Logging
import SyncClient
import Testing
@testable import TerminalApp
@testable import TerminalUI

/// Sync and conflicts in the full-screen app, against the real server and the real libcurl transport.
struct AppSyncTests {
    @Test func syncFromTheHomeScreenThenResolveAConflictFieldByField() async throws {
        let server = ServerProcess()
        try await server.createProject("demo")
        let token = try await server.addUser("alice", project: "demo")
        try await server.admin(["form", "publish", PackagePaths.file("Schema/forms/follow-up-job.json"), "--project", "demo"])
        try await server.start(port: 0)
        defer { server.kill() }
        let (phone, tablet) = (CLIHome(), CLIHome())
        for device in [phone, tablet] {
            let login = try await Subprocess.run(CLIHome.binary, ["--home", device.home, "login", server.url, "--project", "demo", "--token", token])
            #expect(login.status == 0, "\(login.output)")
        }
        let fill = try await phone.run(["fill", "follow-up-job", "--set", "site=B2", "--complete"])
        let id = try #require(CLIHome.recordID(fill))
        #expect(try await phone.run("sync").status == 0)

        // The tablet's app: s syncs, the record arrives.
        let store = try DraftStore(home: URL(fileURLWithPath: tablet.home))
        let login = try #require(try DeviceLogin.load(from: URL(fileURLWithPath: tablet.home)))
        let model = AppModel(store: store, size: TerminalSize(columns: 120, rows: 40))
        await model.attach(SyncEngine(store: store, transport: CurlTransport(options: login.transportOptions), configuration: login.configuration, logger: Logger(label: "test")))
        await model.reload()
        #expect(await model.handle(.character("s")) == .sync)
        await model.runSync { _ in }
        let notice = await model.home.notice ?? ""
        #expect(notice.hasPrefix("Synced: pushed 0, pulled 1"), "\(notice)")
        #expect(await model.home.status.hasPrefix("Synced just now"))
        #expect(await model.home.records.map(\.headline) == ["B2"])

        // Both sides change the priority (a manual-policy field): the tablet's record shows it is in conflict.
        #expect(try await phone.run(["edit", id, "--set", "priority=low", "--complete"]).status == 0)
        #expect(try await phone.run("sync").status == 0)
        #expect(try await tablet.run(["edit", id, "--set", "priority=high", "--set", "reason=Flooded", "--complete"]).status == 0)
        await model.runSync { _ in }
        #expect(await model.home.records.first?.state == .conflict)
        #expect(await model.render().plainText().contains("! B2 · In conflict"))

        // c opens the conflicts sheet: both values and who wrote them; choose mine and resolve.
        _ = await model.handle(.character("c"))
        let text = await model.render().plainText()
        #expect(text.contains("Resolve Conflicts"))
        #expect(text.contains("Mine: High (this device)"))
        #expect(text.contains("Theirs: Low"))
        _ = await model.handle(.character("1"))
        await model.moveFocus(.complete)
        _ = await model.handle(.enter)
        #expect(await model.presented == nil)
        #expect(await model.home.statusLine.hasPrefix("Resolved 1 conflict"))
        await model.runSync { _ in }
        #expect(try await phone.run("sync").status == 0)
        #expect(try await phone.run(["show", id, "--json"]).stdout.contains("\"high\""))
        #expect(await model.home.records.first?.state != .conflict)
    }
}

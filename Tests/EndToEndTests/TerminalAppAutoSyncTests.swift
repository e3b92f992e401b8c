import FieldSheetTesting
import Foundation
import Testing

/// The app syncs by itself, against the real server over loopback: at start, after a sheet closes, and
/// again by its own timer once a server that could not be reached is back.
struct TerminalAppAutoSyncTests {
    @Test func syncsAtStartAfterEachSheetAndRetriesWhenTheServerIsBack() async throws {
        let server = ServerProcess()
        try await server.createProject("demo")
        let token = try await server.addUser("alice", project: "demo")
        try await server.admin(["form", "publish", PackagePaths.file("Schema/forms/follow-up-job.json"), "--project", "demo"])
        try await server.start(port: 0)
        defer { server.kill() }
        let device = CLIHome()
        let login = try await Subprocess.run(CLIHome.binary, ["--home", device.home, "login", server.url, "--project", "demo", "--token", token])
        #expect(login.status == 0, "\(login.output)")

        let tmux = TmuxSession()
        try await tmux.start("env FIELDSHEET_HOME=\(device.home) FIELDSHEET_REDUCE_MOTION=1 TERM=xterm-256color \(CLIHome.binary); echo EXIT $?; sleep 60", columns: 100, rows: 30)
        // At start: the forms arrive with nobody pressing s.
        try await tmux.waitFor("Synced just now")
        try await tmux.keys("n")
        try await tmux.waitFor("New Follow-up Job")
        try await tmux.keys("1")
        try await tmux.waitFor("Create")
        try await tmux.type("Depot A")
        try await tmux.waitFor("[Depot A")
        try await tmux.keys("Escape")
        // After the sheet is dismissed, the draft goes to the server by itself.
        try await tmux.waitFor("the draft synced") { $0.contains("Depot A · Draft") && $0.contains("Synced just now · nothing waiting to sync") }

        // The server goes away: the next sheet's change waits, and the status line says so.
        await server.stop()
        try await tmux.keys("Enter")
        try await tmux.waitFor("[Depot A")
        try await tmux.type(" North")
        try await tmux.waitFor("[Depot A North")
        try await tmux.keys("Escape")
        try await tmux.waitFor("offline, one record waiting") { $0.contains("Offline") && $0.contains("1 record waiting to sync") }

        // Back on the same port: the app's own retry (5 s, then doubling) sends it without a key.
        try await server.start()
        try await tmux.waitFor("synced again by itself", timeout: 60) { $0.contains("Synced just now · nothing waiting to sync") }
        try await tmux.keys("q")
        try await tmux.waitFor("EXIT 0")
    }
}

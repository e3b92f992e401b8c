import FieldSheetTesting
import Foundation
import Testing

/// A tmux server of its own (its own socket), so tests never touch a person's sessions.
final class TmuxSession {
    let socket = "fieldsheet-test-\(UUID().uuidString.prefix(8))"
    let session = "app"
    /// The homes of the apps this session started: they live as long as the session (whose deinit stops the
    /// app first), so a test that does not keep the home it was given cannot delete it under a running app.
    private var homes: [TemporaryDirectory] = []

    /// Runs a tmux command and awaits its exit without holding a thread: the child is spawned with
    /// `posix_spawn` and its exit polled with `waitpid(WNOHANG)` while the task sleeps. Not Foundation's
    /// `Process`: it learns of an exit when every copy of a socket it hands the child is closed, and the tmux
    /// server that the first command forks keeps that copy for as long as it runs. Output goes to a file, not a
    /// pipe, for the same reason.
    @discardableResult
    func tmux(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ["tmux", "-L", socket, "-f", "/dev/null"] + arguments
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        // No signal blocked in the child: the test process's threads block many, a spawned child inherits the
        // caller's mask, and a tmux server started with them blocked ignores `kill-server` (it stayed after
        // every test, its app running).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let lease = await MachineGate.shared.lease()
        defer { lease.release() }
        var pid = pid_t()
        let spawned = posix_spawnp(&pid, "tmux", &actions, &attributes, &cArguments, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        var status: Int32 = 0
        let exited = await eventually(timeout: 60) { waitpid(pid, &status, WNOHANG) != 0 }
        if !exited {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            Issue.record("tmux \(arguments.joined(separator: " ")) did not end within 60 s")
        }
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (exitStatus, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    func start(_ command: String, columns: Int, rows: Int) async throws {
        let result = try await tmux(["new-session", "-d", "-s", session, "-x", "\(columns)", "-y", "\(rows)", command])
        #expect(result.status == 0, "tmux did not start: \(result.output)")
        // A lone Esc must reach the app quickly (tmux holds it back 500 ms by default).
        try await tmux(["set-option", "-g", "escape-time", "10"])
    }

    func keys(_ keys: String...) async throws {
        _ = try await tmux(["send-keys", "-t", session] + keys)
    }

    func type(_ text: String) async throws {
        _ = try await tmux(["send-keys", "-t", session, "-l", text])
    }

    /// A left click at (`column`, `row`), counted from 0, as an xterm SGR mouse report (press, then release).
    func click(column: Int, row: Int) async throws {
        try await type("\u{1B}[<0;\(column + 1);\(row + 1)M\u{1B}[<0;\(column + 1);\(row + 1)m")
    }

    /// The cell position of the first occurrence of `text` on the screen.
    func position(of text: String) async throws -> (column: Int, row: Int)? {
        for (row, line) in try await screen().components(separatedBy: "\n").enumerated() {
            if let range = line.range(of: text) { return (line.distance(from: line.startIndex, to: range.lowerBound), row) }
        }
        return nil
    }

    /// Clicks the first occurrence of `text` (its first cell, or `offset` cells in).
    func click(on text: String, offset: Int = 0) async throws {
        let shown = try await screen()
        let found = try #require(try await position(of: text), "\"\(text)\" is not on the screen:\n\(shown)")
        try await click(column: found.column + offset, row: found.row)
    }

    func screen(escapes: Bool = false) async throws -> String {
        try await tmux(["capture-pane", "-p", "-t", session] + (escapes ? ["-e"] : [])).output
    }

    /// Polls the screen until `condition` holds, with a deadline, then until the screen is settled: a capture can
    /// land while tmux is still parsing a frame (a frame of a sheet over the list is bigger than one read of the
    /// pty), so the part `condition` looks at may be drawn while the rest is not. Returns the first screen that
    /// holds `condition` and reads the same twice in a row (or, if it never settles within two seconds, the last
    /// one that holds `condition`).
    @discardableResult
    func waitFor(_ what: String, timeout: Double = 20, _ condition: (String) -> Bool) async throws -> String {
        var last = ""
        let found = try await eventually(timeout: timeout) {
            last = try await screen()
            return condition(last)
        }
        #expect(found, "timed out waiting for \(what); the screen was:\n\(last)")
        guard found else { return last }
        var settled = last
        _ = try await eventually(timeout: 2) {
            try await Task.sleep(for: .milliseconds(15))
            let next = try await screen()
            defer { if condition(next) { settled = next } }
            return next == settled && condition(next)
        }
        return settled
    }

    @discardableResult
    func waitFor(_ text: String, timeout: Double = 20) async throws -> String {
        try await waitFor("\"\(text)\"", timeout: timeout) { $0.contains(text) }
    }

    /// Waits for the lasting outcome of a dismissal that keeps what was typed: the form sheet closed (no Cancel
    /// on screen) and the home screen listing the draft (`listed`, "headline · Draft"). The "Draft saved." notice
    /// that comes with it lasts six seconds, which a capture on a loaded machine can miss; the notice itself is
    /// asserted on the app's model (AppModelTests).
    @discardableResult
    func waitForDraftKept(_ listed: String = " · Draft", timeout: Double = 20) async throws -> String {
        try await waitFor("the sheet closed and \"\(listed)\" listed", timeout: timeout) { $0.contains(listed) && !$0.contains("Cancel") }
    }

    deinit {
        // deinit cannot await: the one blocking call, at the end of a test.
        _ = system("tmux -L \(socket) -f /dev/null kill-server </dev/null >/dev/null 2>&1")
    }

    /// A device home with the sample forms imported, and the app started on it at `columns`×`rows`;
    /// returns the home. The shell prints `EXIT status` when the app ends. Without motion by default, so
    /// a screen read back is never a frame of a transition.
    @discardableResult
    func startApp(columns: Int, rows: Int, home: TemporaryDirectory = TemporaryDirectory(), environment: String = "FIELDSHEET_REDUCE_MOTION=1") async throws -> TemporaryDirectory {
        let fieldsheet = PackagePaths.debugProduct("fieldsheet")
        let imported = try await Subprocess.run(fieldsheet, ["--home", home.path, "forms", "import"] + ["add-note", "filter-jobs", "follow-up-job", "site-inspection"].map { PackagePaths.file("Schema/forms/\($0).json") })
        #expect(imported.status == 0, "\(imported.output)")
        homes.append(home)
        try await start("env FIELDSHEET_HOME=\(home.path) TERM=xterm-256color \(environment) \(fieldsheet); echo EXIT $?; sleep 60", columns: columns, rows: rows)
        // The whole first screen, key hints (its last line) included: a screen read while a frame is still being
        // written shows the list's frame without them.
        try await waitFor("the first screen drawn") { $0.contains(" Records ") && $0.contains("q Quit") }
        return home
    }

    /// The records the device holds, one line each (`fieldsheet records`).
    static func records(in home: TemporaryDirectory) async throws -> [String] {
        try await Subprocess.run(PackagePaths.debugProduct("fieldsheet"), ["--home", home.path, "records"]).stdout.split(separator: "\n").map(String.init)
    }
}

// The device's side of attachments on loopback, through the real sync engine: the release `fieldsheet` CLI run
// as child processes against a fresh release fieldsheet-server per size. One device home attaches the file
// (`fill --attach … --complete`) and syncs it up; a second home of the same user logs in with
// `--download-attachments ahead` and syncs it down. Each child's peak RSS comes from wait4's rusage (ru_maxrss),
// the server's from /proc/PID/status (VmHWM), so the device's memory can be compared across file sizes.
import FieldSheetTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One finished child process: exit status, wall time, CPU time (user + system), peak RSS (MB), what it printed.
struct MeasuredRun {
    var status: Int32
    var seconds: Double
    var cpuSeconds: Double
    var peakMB: Double
    var output: String
}

/// Runs `executable` with `arguments` (stdin from /dev/null, stdout and stderr to a file), waits for it with
/// wait4 and returns its peak resident set size with its wall time.
func runMeasured(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> MeasuredRun {
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("syncbench-child-\(UUID().uuidString.prefix(8)).log").path
    defer { unlink(log) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    var env = ProcessInfo.processInfo.environment
    env.removeValue(forKey: "FIELDSHEET_HOME")
    for (key, value) in environment { env[key] = value }
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    let start = Date()
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
    guard spawned == 0 else { throw FixtureError("could not start \(executable): \(String(cString: strerror(spawned)))") }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
        guard errno == EINTR else { throw FixtureError("wait4: \(String(cString: strerror(errno)))") }
    }
    let seconds = Date().timeIntervalSince(start)
    let exited = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    func cpu(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return MeasuredRun(status: exited, seconds: seconds, cpuSeconds: cpu(usage.ru_utime) + cpu(usage.ru_stime),
                       peakMB: Double(usage.ru_maxrss) / 1024, output: output)
}

func runDeviceAttachmentBench(bin: String) async throws {
    print("Attachments device ↔ server on loopback (release fieldsheet CLI as child processes, release fieldsheet-server, embedded SQLite; device peak RSS from wait4, server's from /proc):")
    let (seed, sizes) = attachmentBenchSettings()
    let cli = "\(bin)/fieldsheet"
    // The CLI's baseline: a command that opens the device database and prints, nothing more.
    let idleHome = TemporaryDirectory("syncbench-idle")
    let idle = try runMeasured(cli, ["--home", idleHome.path, "status"])
    print(String(format: "  fieldsheet status on an empty home (the CLI's floor): peak RSS %.1f MB", idle.peakMB))
    for megabytes in sizes {
        let (server, token) = try await photoBenchServer(bin: bin)
        let work = TemporaryDirectory("syncbench-device")
        let file = work.file("bench-\(megabytes).jpg")
        let sha = try await makeBenchFile(file, megabytes: megabytes, seed: seed)
        try await server.start(port: 0)
        defer { server.kill() }
        guard let pid = server.processIdentifier else { throw FixtureError("the server is not running") }
        let serverIdle = serverMemory(pid)

        func check(_ run: MeasuredRun, _ what: String) throws {
            guard run.status == 0 else { throw FixtureError("\(what) exited \(run.status): \(run.output)") }
        }
        let (phone, tablet) = (work.file("phone"), work.file("tablet"))
        try check(try runMeasured(cli, ["--home", phone, "login", server.url, "--project", "bench"], environment: ["FIELDSHEET_TOKEN": token]), "login")
        let attach = try runMeasured(cli, ["--home", phone, "fill", "photos", "--attach", "photo=\(file)", "--complete"])
        try check(attach, "fill --attach")
        var serverCPU = cpuSeconds(String(pid))
        let up = try runMeasured(cli, ["--home", phone, "sync"])
        try check(up, "sync (upload)")
        let serverUpCPU = cpuSeconds(String(pid)) - serverCPU
        let serverAfterUpload = serverMemory(pid)
        try check(try runMeasured(cli, ["--home", tablet, "login", server.url, "--project", "bench", "--download-attachments", "ahead"], environment: ["FIELDSHEET_TOKEN": token]), "login")
        serverCPU = cpuSeconds(String(pid))
        let down = try runMeasured(cli, ["--home", tablet, "sync"])
        try check(down, "sync (download)")
        let serverDownCPU = cpuSeconds(String(pid)) - serverCPU
        let serverAfterDownload = serverMemory(pid)
        let fetched = tablet + "/attachments/" + sha
        var status = stat()
        // The home is encrypted: the stored file is the sealed one, a little longer than the attachment.
        guard stat(fetched, &status) == 0, Int(status.st_size) >= megabytes << 20 else {
            throw FixtureError("the second device does not hold the \(megabytes) MB file after its sync: \(down.output)")
        }
        print(String(format: "  %4d MB: attach %.2f s, device peak RSS %.1f MB", megabytes, attach.seconds, attach.peakMB))
        print(String(format: "           sync up %.2f s (%.0f MB/s, whole command): CPU device %.2f s, server %.2f s; peak RSS device %.1f MB, server %.1f MB (idle %.1f MB)",
            up.seconds, Double(megabytes) / up.seconds, up.cpuSeconds, serverUpCPU, up.peakMB, serverAfterUpload.peak, serverIdle.now))
        print(String(format: "           sync down, ahead %.2f s (%.0f MB/s, whole command, hash verified): CPU device %.2f s, server %.2f s; peak RSS device %.1f MB, server %.1f MB",
            down.seconds, Double(megabytes) / down.seconds, down.cpuSeconds, serverDownCPU, down.peakMB, serverAfterDownload.peak))
    }
}

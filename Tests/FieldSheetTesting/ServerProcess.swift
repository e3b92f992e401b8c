import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The real `fieldsheet-server` binary on loopback, in its own temporary data directory: admin commands,
/// start (port 0, or the previous port for a restart), SIGKILL and stop. Killed when released.
public final class ServerProcess: @unchecked Sendable {
    public let data = TemporaryDirectory("server")
    public let binary: String
    private let lock = NSLock()
    private var process: Process?
    private var currentPort = 0
    private var exited = Exit()
    /// The hold on the machine while the server runs (``MachineGate``).
    private var lease: MachineGate.Lease?

    /// A PostgreSQL URL (`--database`) instead of SQLite in the temporary data directory.
    public let database: String?

    /// `binary` defaults to the debug build's `fieldsheet-server`; `database`, a PostgreSQL URL, replaces the
    /// embedded SQLite database.
    public init(binary: String = PackagePaths.debugProduct("fieldsheet-server"), database: String? = nil) {
        self.binary = binary
        self.database = database
    }

    /// Where the server keeps its data, as command-line options.
    public var storageArguments: [String] { database.map { ["--database", $0] } ?? ["--data", dataDirectory] }

    deinit {
        kill()
    }

    public var port: Int { lock.withLock { currentPort } }
    public var url: String { "http://127.0.0.1:\(port)" }
    public var dataDirectory: String { data.file("data") }

    /// Runs an admin command against the server's data (``storageArguments`` appended).
    @discardableResult
    public func admin(_ arguments: [String]) async throws -> ProcessResult {
        let result = try await Subprocess.run(binary, arguments + storageArguments, timeout: 60)
        guard result.status == 0 else { throw FixtureError("fieldsheet-server \(arguments.joined(separator: " ")) failed: \(result.output)") }
        return result
    }

    public func createProject(_ name: String) async throws {
        try await admin(["project", "create", name])
    }

    /// Adds a user and returns their token.
    public func addUser(_ name: String, project: String, role: String = "collector") async throws -> String {
        try await admin(["user", "add", name, "--project", project, "--role", role]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Publishes a form given as JSON text.
    public func publish(json: String, project: String) async throws {
        let file = data.write("form-\(UUID().uuidString.prefix(8)).json", json)
        try await admin(["form", "publish", file, "--project", project])
    }

    /// Starts the server and waits until it listens; `port` nil reuses the previous port (a restart).
    /// `options` are added to `serve`'s command line.
    public func start(port: Int? = nil, options: [String] = [], timeout: Double = 30) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        let chosen = port ?? self.port
        process.arguments = ["serve"] + storageArguments + ["--port", String(chosen), "--log-level", "error"] + options
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        let exit = Exit()
        process.terminationHandler = { _ in exit.signal() }
        let lease = await MachineGate.shared.lease()
        var lastError: (any Error)?
        // A restart on the port just freed can race the old socket's release: try a few times.
        for _ in 0..<50 {
            do {
                try process.run()
                lastError = nil
                break
            } catch {
                lastError = error
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        if let lastError {
            lease.release()
            throw lastError
        }
        let buffer = PipeCollector(output.fileHandleForReading)
        let previous = lock.withLock {
            self.process = process
            exited = exit
            defer { self.lease = lease }
            return self.lease
        }
        previous?.release()
        let ready = await eventually(timeout: timeout) { buffer.text.contains("listening on http://") || !process.isRunning }
        guard ready, process.isRunning, let line = buffer.text.split(separator: "\n").first(where: { $0.hasPrefix("listening on http://") }),
            let portText = line.split(separator: ":").last, let listening = Int(portText.trimmingCharacters(in: .whitespaces))
        else {
            kill()
            throw FixtureError("fieldsheet-server did not start listening (port \(chosen)): \(buffer.text)")
        }
        lock.withLock { currentPort = listening }
    }

    /// Starts again on the same port, retrying while the port is still held by the killed process.
    public func restart(timeout: Double = 30) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            do {
                try await start(port: port)
                return
            } catch {
                if Date() > deadline { throw error }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// The running server's process id, if it runs.
    public var processIdentifier: Int32? {
        lock.withLock { process?.isRunning == true ? process?.processIdentifier : nil }
    }

    /// SIGKILL: no chance to finish anything in flight. Returns at once, without waiting for the process to
    /// be gone (for `defer` and `deinit`); ``killAndWait()`` waits.
    public func kill() {
        guard let (process, lease) = lock.withLock({ () -> (Process, MachineGate.Lease?)? in
            defer {
                self.process = nil
                self.lease = nil
            }
            return self.process.map { ($0, self.lease) }
        }) else { return }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        lease?.release()
    }

    /// SIGKILL, then waits (the task sleeping) until the process has exited, so its port and files are free.
    public func killAndWait() async {
        let exited = lock.withLock { self.exited }
        let running = processIdentifier != nil
        kill()
        if running { await exited.wait() }
    }

    /// SIGTERM, then wait for the graceful shutdown (at most `timeout` seconds, then SIGKILL).
    public func stop(timeout: Double = 60) async {
        guard let (process, exited) = lock.withLock({ self.process.map { ($0, self.exited) } }) else { return }
        if process.isRunning { process.terminate() }
        if await !exited.wait(timeout: timeout) { Glibc.kill(process.processIdentifier, SIGKILL) }
        await exited.wait()
        let lease = lock.withLock {
            defer {
                self.process = nil
                self.lease = nil
            }
            return self.lease
        }
        lease?.release()
    }
}

/// A fixture that could not be set up.
public struct FixtureError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

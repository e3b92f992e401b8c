import Foundation

/// A real `fieldsheet-server` on a loopback port with a fresh SQLite data directory: one project
/// (`alpha`), the job form of Tests/schemathesis/job-form.json, and members made with its admin commands.
/// Nothing here blocks a thread: exits are awaited through termination handlers and output is gathered as it
/// arrives, the task sleeping between looks.
final class ServerProcess: @unchecked Sendable {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `FIELDSHEET_SERVER`, or the debug build of the main package.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["FIELDSHEET_SERVER"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return repository.appendingPathComponent(".build/debug/fieldsheet-server")
    }

    let data: URL
    private var server: Child?
    private(set) var url: URL!

    init() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw Failure("No fieldsheet-server at \(Self.binary.path). Build the main package first (`swift build` at the repository root) or set FIELDSHEET_SERVER.")
        }
        data = FileManager.default.temporaryDirectory.appendingPathComponent("fieldsheet-generated-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        _ = try await Self.run(["project", "create", "alpha", "--data", data.path])
        _ = try await Self.run(["form", "publish", Self.repository.appendingPathComponent("Tests/schemathesis/job-form.json").path, "--project", "alpha", "--data", data.path])
    }

    /// Adds a member and returns their token.
    func member(_ name: String, role: String) async throws -> String {
        try await Self.run(["user", "add", name, "--project", "alpha", "--role", role, "--data", data.path]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts serving and waits (up to 30 s) for the "listening on URL" line.
    func start() async throws {
        let child = try Child(Self.binary, ["serve", "--data", data.path, "--port", "0", "--log-level", "error"])
        server = child
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let line = child.output.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }) {
                url = URL(string: String(line.dropFirst("listening on ".count)))
                return
            }
            if child.exited { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw Failure("fieldsheet-server did not report that it listens; it printed: \(child.output)")
    }

    /// SIGTERM to the server (reaped by Foundation; nothing waits) and its data removed.
    func stop() {
        if let server, !server.exited { server.process.terminate() }
        try? FileManager.default.removeItem(at: data)
    }

    /// Runs an admin command to completion; its standard output.
    static func run(_ arguments: [String]) async throws -> String {
        let child = try Child(binary, arguments)
        let deadline = ContinuousClock.now + .seconds(60)
        while !child.exited, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        // What it wrote last is read once its end of the pipe closes (bounded: a grandchild could hold it).
        let drained = ContinuousClock.now + .seconds(5)
        while !child.reachedEnd, ContinuousClock.now < drained {
            try await Task.sleep(for: .milliseconds(10))
        }
        guard child.exited else {
            child.process.terminate()
            throw Failure("fieldsheet-server \(arguments.joined(separator: " ")) did not finish in 60 s: \(child.output)")
        }
        guard child.process.terminationStatus == 0 else {
            throw Failure("fieldsheet-server \(arguments.joined(separator: " ")) failed (\(child.process.terminationStatus)): \(child.output)")
        }
        return child.output
    }
}

/// A child process whose standard output is gathered as it arrives and whose exit is noted by its termination
/// handler.
final class Child: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var bytes = Data()
    private var ended = false
    private var finished = false

    init(_ executable: URL, _ arguments: [String]) throws {
        let pipe = Pipe()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            guard let self else { return }
            self.lock.withLock {
                if chunk.isEmpty { self.ended = true } else { self.bytes.append(chunk) }
            }
            if chunk.isEmpty { handle.readabilityHandler = nil }
        }
        process.terminationHandler = { [weak self] _ in self?.lock.withLock { self?.finished = true } }
        try process.run()
    }

    /// What it printed so far.
    var output: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }
    /// Whether it has exited.
    var exited: Bool { lock.withLock { finished } }
    /// Whether its standard output has been read to the end.
    var reachedEnd: Bool { lock.withLock { ended } }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

import Foundation

/// A real `fieldsheet-server` on a loopback port with a fresh SQLite data directory: one project
/// (`alpha`), the job form of Tests/schemathesis/job-form.json, and members made with its admin commands.
final class ServerProcess: @unchecked Sendable {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `FIELDSHEET_SERVER`, or the debug build of the main package.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["FIELDSHEET_SERVER"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return repository.appendingPathComponent(".build/debug/fieldsheet-server")
    }

    let data: URL
    let process = Process()
    private(set) var url: URL!

    init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw Failure("No fieldsheet-server at \(Self.binary.path). Build the main package first (`swift build` at the repository root) or set FIELDSHEET_SERVER.")
        }
        data = FileManager.default.temporaryDirectory.appendingPathComponent("fieldsheet-generated-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        _ = try Self.run(["project", "create", "alpha", "--data", data.path])
        _ = try Self.run(["form", "publish", Self.repository.appendingPathComponent("Tests/schemathesis/job-form.json").path, "--project", "alpha", "--data", data.path])
    }

    /// Adds a member and returns their token.
    func member(_ name: String, role: String) throws -> String {
        try Self.run(["user", "add", name, "--project", "alpha", "--role", role, "--data", data.path]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts serving and waits (up to 30 s) for the "listening on URL" line.
    func start() throws {
        let output = Pipe()
        process.executableURL = Self.binary
        process.arguments = ["serve", "--data", data.path, "--port", "0", "--log-level", "error"]
        process.standardOutput = output
        try process.run()
        let handle = output.fileHandleForReading
        let deadline = Date().addingTimeInterval(30)
        var text = ""
        while Date() < deadline, process.isRunning {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }) {
                url = URL(string: String(line.dropFirst("listening on ".count)))
                return
            }
        }
        throw Failure("fieldsheet-server did not report that it listens; it printed: \(text)")
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: data)
    }

    /// Runs an admin command to completion; its standard output.
    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        let output = Pipe()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure("fieldsheet-server \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(text)") }
        return text
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

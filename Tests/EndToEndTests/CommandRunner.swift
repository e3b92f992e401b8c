import Foundation

/// Runs the package's built executables as a user would, capturing their output and exit status.
struct CommandRunner {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The built executable `name` next to the test bundle (the same build configuration).
    static func executable(_ name: String) -> URL {
        let bundle = Bundle.main.bundleURL
        let beside = bundle.deletingLastPathComponent().appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return packageRoot.appendingPathComponent(".build/debug/\(name)")
    }

    /// Runs `name` with `arguments` in `directory`, feeding `input` to its standard input.
    static func run(_ name: String, _ arguments: [String], in directory: URL? = nil, input: String = "", environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = executable(name)
        process.arguments = arguments
        process.currentDirectoryURL = directory ?? packageRoot
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe()
        let errors = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }
}

import Foundation

/// What a finished child process left: its exit status and everything it printed.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// Whether the process was killed for running past its timeout.
    public var timedOut: Bool

    /// stdout and stderr together, for messages in failed expectations.
    public var output: String { "exit \(status)\nstdout:\n\(stdout)\nstderr:\n\(stderr)" }
}

/// Runs executables as a person or a script would, with a deadline instead of sleeps.
public enum Subprocess {
    /// Runs `executable` with `arguments`, feeding `stdin` (then end of input) and waiting at most `timeout` seconds.
    public static func run(
        _ executable: String, _ arguments: [String], stdin: String? = nil,
        environment: [String: String] = [:], timeout: Double = 60
    ) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "FIELDSHEET_HOME")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let collected = Collected()
        let group = DispatchGroup()
        for (handle, isError) in [(output.fileHandleForReading, false), (errors.fileHandleForReading, true)] {
            group.enter()
            DispatchQueue.global().async {
                let data = handle.readDataToEndOfFile()
                collected.set(data, isError: isError)
                group.leave()
            }
        }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()
        let finished = Polling.until(timeout: timeout) { !process.isRunning }
        if !finished {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        group.wait()
        process.waitUntilExit()
        let (out, err) = collected.value
        return ProcessResult(status: process.terminationStatus, stdout: out, stderr: err, timedOut: !finished)
    }
}

private final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()

    func set(_ data: Data, isError: Bool) {
        lock.withLock { if isError { err = data } else { out = data } }
    }

    var value: (String, String) {
        lock.withLock { (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self)) }
    }
}

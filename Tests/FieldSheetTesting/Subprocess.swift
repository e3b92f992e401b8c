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
    /// The wait suspends the task (the exit is reported by the process's termination handler), so no thread is
    /// held while the child runs.
    public static func run(
        _ executable: String, _ arguments: [String], stdin: String? = nil,
        environment: [String: String] = [:], timeout: Double = 60
    ) async throws -> ProcessResult {
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
        let exited = Exit()
        process.terminationHandler = { _ in exited.signal() }
        let lease = await MachineGate.shared.lease()
        defer { lease.release() }
        try process.run()
        let out = PipeCollector(output.fileHandleForReading)
        let err = PipeCollector(errors.fileHandleForReading)
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()
        let finished = await exited.wait(timeout: timeout)
        if !finished {
            kill(process.processIdentifier, SIGKILL)
            await exited.wait()
        }
        // Everything the child wrote is read once its ends of the pipes close (a grandchild could hold them:
        // bounded too).
        _ = await eventually(timeout: 10) { out.reachedEnd && err.reachedEnd }
        return ProcessResult(status: process.terminationStatus, stdout: out.text, stderr: err.text, timedOut: !finished)
    }
}

/// A process's exit, awaited: signalled from its termination handler.
public final class Exit: @unchecked Sendable {
    private let lock = NSLock()
    private var exited = false
    private var waiters: [@Sendable () -> Void] = []

    public init() {}

    /// Marks the exit and resumes every waiter.
    public func signal() {
        let resumed = lock.withLock {
            exited = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in resumed { waiter() }
    }

    /// Waits for the exit.
    public func wait() async {
        _ = await wait(timeout: nil)
    }

    /// Waits for the exit at most `timeout` seconds (nil: as long as it takes); whether it came.
    public func wait(timeout: Double?) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = ResumeOnce(continuation)
            let done = lock.withLock {
                if !exited { waiters.append { once.resume(true) } }
                return exited
            }
            if done {
                once.resume(true)
            } else if let timeout {
                Task {
                    try? await Task.sleep(for: .seconds(timeout))
                    once.resume(false)
                }
            }
        }
    }
}

/// A continuation resumed by whichever of several events comes first.
private final class ResumeOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Bool, Never>?

    init(_ continuation: CheckedContinuation<Bool, Never>) {
        self.continuation = continuation
    }

    func resume(_ value: Bool) {
        lock.withLock {
            defer { continuation = nil }
            return continuation
        }?.resume(returning: value)
    }
}

extension Process {
    /// Waits at most `timeout` seconds for the process to end, the task sleeping meanwhile, and SIGKILLs it if it
    /// has not; whether it ended by itself. Either way the process has been reaped when this returns (its
    /// termination status can be read), unless it outlives a SIGKILL by 30 seconds.
    @discardableResult
    public func ended(within timeout: Double) async -> Bool {
        let ended = await eventually(timeout: timeout) { !isRunning }
        if !ended {
            kill(processIdentifier, SIGKILL)
            _ = await eventually(timeout: 30) { !isRunning }
        }
        return ended
    }
}

import Foundation

/// Reads lines from a pipe as they arrive, waiting at most until a deadline: poll(2) without blocking, the task
/// sleeping briefly between looks (no thread is held while nothing arrives).
public final class LineReader {
    private let fd: Int32
    private var buffer: [UInt8] = []
    /// Whether the writer closed its end.
    public private(set) var reachedEnd = false

    public init(_ handle: FileHandle) {
        fd = handle.fileDescriptor
    }

    /// The next line without its newline; nil at end of input or when `deadline` passes first.
    public func next(deadline: Date) async -> String? {
        var pause = Duration.microseconds(200)
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if reachedEnd { return nil }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 0)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 { return nil }
            if ready == 0 {
                if deadline.timeIntervalSinceNow <= 0 { return nil }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(20))
                continue
            }
            pause = .microseconds(200)
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                reachedEnd = true
                continue
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }
}

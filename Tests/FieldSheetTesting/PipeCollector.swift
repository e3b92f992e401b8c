import Foundation

/// Collects everything a child process writes to a pipe, as it arrives, on a thread of its own that blocks in
/// `read` until the writer closes its end.
///
/// Not `FileHandle.readabilityHandler`: on Linux its dispatch read source, torn down while the process and pipe
/// go away, can leave libdispatch's event loop holding a freed registration, which crashed a whole test run
/// (SIGSEGV in `_dispatch_event_loop_drain`). A blocking read registers nothing with the event loop.
public final class PipeCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var ended = false

    /// Starts reading `handle` (the pipe's read end; kept open until the end of input).
    public init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            while true {
                let chunk = handle.availableData  // blocks until bytes arrive or the writer closes
                if chunk.isEmpty { break }
                lock.withLock { data.append(chunk) }
            }
            lock.withLock { ended = true }
        }
        thread.name = "FieldSheetTesting.pipe"
        thread.start()
    }

    /// What arrived so far, as UTF-8 text.
    public var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }

    /// Whether the writer closed its end and everything it wrote has been read.
    public var reachedEnd: Bool { lock.withLock { ended } }
}

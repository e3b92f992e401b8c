import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Signals delivered to callbacks on a thread of their own, whichever thread the kernel interrupts.
///
/// The installed handler does the one thing a signal handler may safely do: it writes the signal's number to a
/// pipe. A thread that blocks reading the pipe calls the callbacks. The handler is installed with `SA_RESTART`,
/// so a `read` of standard input that the signal interrupts carries on rather than looking like the end of
/// input. (A dispatch signal source needs the signal blocked on every thread to be reliable on Linux; a process
/// whose threads were started before it was created could lose the signal altogether.)
public enum SignalWatch {
    /// Calls `handler` with the signal's number, on the watch thread, each time one of `signals` arrives, until
    /// the returned watch is cancelled.
    @discardableResult
    public static func start(_ signals: [Int32], _ handler: @escaping @Sendable (Int32) -> Void) -> Watch {
        let watch = Watch(signals: signals)
        guard SignalPipe.shared.add(watch.id, handler) >= 0 else { return watch }
        for number in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = signalWatchHandler
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
        return watch
    }

    /// One `start`: its callback stops being called once cancelled, and its signals get their default handling.
    public struct Watch: Sendable {
        let id = UUID()
        let signals: [Int32]

        public func cancel() {
            SignalPipe.shared.remove(id)
            for number in signals { signal(number, SIG_DFL) }
        }
    }
}

/// The write end of the signal pipe, read by the signal handler (set once, before any handler is installed).
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

private let signalWatchHandler: @convention(c) (Int32) -> Void = { number in
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalPipeWriteEnd, &byte, 1)
    errno = saved
}

/// The pipe and its reading thread, made on first use.
private final class SignalPipe: @unchecked Sendable {
    static let shared = SignalPipe()

    private let lock = NSLock()
    private var handlers: [UUID: @Sendable (Int32) -> Void] = [:]
    private let readEnd: Int32

    private init() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            readEnd = -1
            return
        }
        readEnd = ends[0]
        signalPipeWriteEnd = ends[1]
        let thread = Thread { [self] in
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count == 1 {
                    let number = Int32(byte)
                    for handler in lock.withLock({ handlers.values }) { handler(number) }
                } else if count == 0 || errno != EINTR {
                    return
                }
            }
        }
        thread.name = "FieldSheet.signals"
        thread.start()
    }

    /// Adds a callback; returns the pipe's write end, or -1 when no pipe could be made.
    func add(_ id: UUID, _ handler: @escaping @Sendable (Int32) -> Void) -> Int32 {
        lock.withLock { handlers[id] = handler }
        return signalPipeWriteEnd
    }

    func remove(_ id: UUID) {
        lock.withLock { _ = handlers.removeValue(forKey: id) }
    }
}

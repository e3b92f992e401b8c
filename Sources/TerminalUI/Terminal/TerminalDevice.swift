import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The state needed to give the terminal back, kept where a signal handler can reach it.
nonisolated(unsafe) private var savedTermios = termios()
nonisolated(unsafe) private var terminalIsTaken = false
private let restoreSequence = Array("\u{1B}[?2004l\u{1B}[?1006l\u{1B}[?1000l\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l".utf8)

/// Gives the terminal back (leave the alternate screen, stop mouse reporting, show the cursor,
/// cooked mode). Uses only async-signal-safe calls, so crash-signal handlers may call it.
public func restoreTerminalFromAnyContext() {
    guard terminalIsTaken else { return }
    terminalIsTaken = false
    restoreSequence.withUnsafeBufferPointer { buffer in
        _ = write(STDOUT_FILENO, buffer.baseAddress, buffer.count)
    }
    var original = savedTermios
    _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
}

/// The controlling terminal: raw mode, the alternate screen, mouse reporting, and its size.
public enum TerminalDevice {
    /// Whether both standard input and standard output are terminals.
    public static var isInteractive: Bool {
        isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
    }

    /// The terminal's size, or nil when standard output is not a terminal.
    public static func size() -> TerminalSize? {
        var window = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else { return nil }
        return TerminalSize(columns: Int(window.ws_col), rows: Int(window.ws_row))
    }

    /// Raw mode, the alternate screen, hidden cursor, SGR mouse reporting and bracketed paste.
    /// Installs handlers so that crash signals give the terminal back before the process dies.
    public static func take() throws {
        var current = termios()
        guard tcgetattr(STDIN_FILENO, &current) == 0 else {
            throw TerminalError(description: "Standard input is not a terminal; use the line mode (fieldsheet fill FORM < answers.txt).")
        }
        savedTermios = current
        var raw = current
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_oflag &= ~tcflag_t(OPOST)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else {
            throw TerminalError(description: "The terminal refused raw mode.")
        }
        terminalIsTaken = true
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[?1000h\u{1B}[?1006h\u{1B}[?2004h\u{1B}[2J")
        for crash in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP] {
            signal(crash) { number in
                restoreTerminalFromAnyContext()
                signal(number, SIG_DFL)
                raise(number)
            }
        }
    }

    /// Gives the terminal back; safe to call more than once.
    public static func restore() {
        restoreTerminalFromAnyContext()
    }

    /// Writes text to standard output at once.
    public static func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBufferPointer { buffer in
                Glibc.write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written <= 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}

/// The terminal could not be set up.
public struct TerminalError: Error, CustomStringConvertible {
    public var description: String
}

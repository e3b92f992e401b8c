import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Names the process that owns an open presentation, so the next open can tell a presentation left
/// behind by a killed process from one another running process still has on screen.
///
/// An owner is `pid:start`, where `start` is the process start time from `/proc` (0 where there is
/// no `/proc`), so a reused process id does not pass for the dead owner.
enum ProcessIdentity {
    /// This process.
    static let current: String = owner(of: getpid())

    static func owner(of pid: Int32) -> String {
        "\(pid):\(startTime(of: pid) ?? 0)"
    }

    /// Whether the process named by `owner` is still running.
    static func isAlive(_ owner: String) -> Bool {
        if owner == current { return true }
        let parts = owner.split(separator: ":")
        guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, let start = UInt64(parts[1]) else { return false }
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = stat(of: pid) else { return start == 0 }
        // A zombie (killed, not yet reaped by its parent) is as dead as it gets.
        return stat.start == start && stat.state != "Z" && stat.state != "X"
    }

    static func startTime(of pid: Int32) -> UInt64? {
        stat(of: pid)?.start
    }

    /// The state letter (field 3) and start time (field 22, clock ticks since boot) from
    /// `/proc/PID/stat`, or nil where it cannot be read.
    static func stat(of pid: Int32) -> (state: Substring, start: UInt64)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After the command name in parentheses come fields 3, 4, …; field 22 is the 20th of them.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let start = UInt64(fields[19]) else { return nil }
        return (fields[0], start)
    }
}

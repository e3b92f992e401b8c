import Foundation

/// Waits for a condition without fixed sleeps: checks it, yields briefly, until it holds or the deadline passes.
public enum Polling {
    /// Returns true as soon as `condition` holds, false when `timeout` seconds pass first.
    public static func until(timeout: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var pause: useconds_t = 200
        while Date() < deadline {
            if try condition() { return true }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
        return try condition()
    }
}

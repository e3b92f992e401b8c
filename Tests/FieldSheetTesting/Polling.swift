import Foundation

/// Waits for `condition` without fixed sleeps and without holding a thread: checks it, then sleeps the task
/// briefly (`Task.sleep`, so the thread serves other tests meanwhile), until it holds or `timeout` seconds pass;
/// whether it held. A passing check returns at once, so the default is generous: a full test run on two cores
/// can keep a task from being scheduled for tens of seconds.
public func eventually(timeout: Double = 120, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .seconds(timeout)
    var pause = Duration.microseconds(200)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: pause)
        pause = min(pause * 2, .milliseconds(10))
    }
    return try await condition()
}

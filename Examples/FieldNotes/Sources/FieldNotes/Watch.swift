import Foundation

/// Waits, up to `seconds`, for an observed sequence to emit a value that satisfies `condition`: the
/// screen's view of "the list now shows it". Nothing is re-read on a timer; only the sequence wakes it.
func firstValue<S: AsyncSequence & Sendable>(
    of sequence: S, within seconds: Double, _ what: String, where condition: @escaping @Sendable (S.Element) -> Bool
) async throws -> S.Element where S.Element: Sendable {
    try await withThrowingTaskGroup(of: S.Element?.self) { group in
        group.addTask {
            for try await value in sequence where condition(value) { return value }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw ExampleFailure("\(what) did not happen within \(Int(seconds)) s")
        }
        return value
    }
}

struct ExampleFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

import FieldSheetTesting
import Testing

/// A trait for the suites and tests whose outcome depends on timing: those that time another member's requests
/// while one member does something hostile, or that act on a device at the moment it reaches a step.
///
/// Each of their test cases runs inside ``MachineGate/exclusive(patience:drain:_:)``: it starts once no server or
/// child process of another test runs, and no other test starts one until it has finished, so it runs in the
/// same `swift test` run as everything else without measuring its neighbours. Tests that start no server or
/// process go on meanwhile.
public struct MeasuresTimingTrait: TestTrait, SuiteTrait, TestScoping {
    /// Applied to a suite, the trait applies to each test (and each case) in it rather than to the whole suite.
    public var isRecursive: Bool { true }

    /// Runs the test case with the machine to itself (``MachineGate``).
    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await MachineGate.shared.exclusive { try await function() }
    }
}

extension Trait where Self == MeasuresTimingTrait {
    /// The test measures time: it runs while no other test's server or child process runs (``MeasuresTimingTrait``).
    public static var measuresTiming: Self { Self() }
}

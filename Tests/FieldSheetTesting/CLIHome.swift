import Foundation

/// A temporary FieldSheet home and a way to run the built `fieldsheet` binary against it.
public final class CLIHome: Sendable {
    public let directory = TemporaryDirectory("cli")
    /// `.build/debug/fieldsheet`, relative to the package root.
    public static let binary = PackagePaths.debugProduct("fieldsheet")

    public init() {}

    public var home: String { directory.file("home") }

    /// Runs `fieldsheet --home HOME arguments…`.
    public func run(_ arguments: [String], stdin: String? = "", timeout: Double = 60) async throws -> ProcessResult {
        try await Subprocess.run(Self.binary, ["--home", home] + arguments, stdin: stdin, timeout: timeout)
    }

    public func run(_ arguments: String..., stdin: String? = "") async throws -> ProcessResult {
        try await run(arguments, stdin: stdin)
    }

    /// Imports the follow-up job form (editable after submission unless told otherwise).
    public func importFollowUpJob(editableAfterSubmit: Bool = true) async throws {
        let file = directory.write("follow-up-job.json", SampleForms.followUpJobJSON(editableAfterSubmit: editableAfterSubmit))
        let result = try await run("forms", "import", file)
        precondition(result.status == 0, "importing the fixture form failed: \(result.output)")
    }

    /// The record id a fill printed (the first line of standard output).
    public static func recordID(_ result: ProcessResult) -> String? {
        result.stdout.split(separator: "\n").first.map(String.init)
    }
}

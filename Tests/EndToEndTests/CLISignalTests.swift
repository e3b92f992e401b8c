import DraftStore
import FieldSheetTesting
import Foundation
import Testing

/// The non-cancel dismissals that reach a line-mode fill from outside: Ctrl-C, SIGTERM, SIGHUP, and a kill.
struct CLISignalTests {
    /// Starts a line-mode fill, types the site, and waits until it is durable (the next prompt shows).
    func startFill(_ cli: CLIHome) async throws -> (Process, Pipe, LineReader) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLIHome.binary)
        process.arguments = ["--home", cli.home, "fill", "follow-up-job"]
        let input = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let reader = LineReader(errors.fileHandleForReading)
        let deadline = Date().addingTimeInterval(30)
        func waitFor(_ prefix: String) async -> Bool {
            while let line = await reader.next(deadline: deadline) {
                if line.contains(prefix) { return true }
            }
            return false
        }
        #expect(await waitFor("[1/3] Site"))
        input.fileHandleForWriting.write(Data("B2 basement\n".utf8))
        #expect(await waitFor("[2/3] Priority"))
        return (process, input, reader)
    }

    @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
    func aSignalKeepsEverythingAsADraft(signal: Int32) async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let (process, input, reader) = try await startFill(cli)
        kill(process.processIdentifier, signal)
        #expect(await process.ended(within: 30), "the fill did not end on signal \(signal)")
        var rest: [String] = []
        while let line = await reader.next(deadline: Date().addingTimeInterval(5)) { rest.append(line) }
        try? input.fileHandleForWriting.close()
        #expect(process.terminationStatus == 3, "\(rest)")
        #expect(rest.joined().contains("everything typed was kept"))
        let listed = try await cli.run("records", "--state", "draft")
        #expect(listed.stdout.split(separator: "\n").count == 1)
        #expect(!listed.stderr.contains("left open"), "the signal did not end the presentation")
        let id = String(listed.stdout.prefix(36))
        #expect(try await cli.run("show", id).stdout.contains("Site: B2 basement"))
    }

    @Test func aKilledFillIsRecoveredOnTheNextRunWithEverythingKept() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let (process, input, _) = try await startFill(cli)
        kill(process.processIdentifier, SIGKILL)
        await process.ended(within: 30)
        try? input.fileHandleForWriting.close()
        let listed = try await cli.run("records", "--state", "draft")
        #expect(listed.stderr.contains("was left open when FieldSheet stopped; everything typed was kept"))
        let id = String(listed.stdout.prefix(36))
        #expect(try await cli.run("show", id).stdout.contains("Site: B2 basement"))
        // The recovered draft resumes and its Cancel reverts only the new sheet.
        let resume = try await cli.run("resume", id, "--set", "site=Roof", "--cancel", "--discard")
        #expect(resume.status == 4)
        #expect(try await cli.run("show", id).stdout.contains("Site: B2 basement"))
    }
}

import DraftStore
import FieldSheetTestTraits
import FieldSheetTesting
import Foundation
import FormModel
import SyncClient
import Testing

/// The device process SIGKILLed while it applies pull pages: each page and its cursor commit together,
/// so the next sync carries on from the last whole page and ends where an uninterrupted one would.
@Suite(.measuresTiming)
struct SyncCrashTests {
    @Test func theDeviceKilledWhileApplyingPullPagesEndsWithEverythingOnce() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let source = try fixture.device(token: token)
        source.configuration.pushBatchSize = 100
        try await source.sync()
        for index in 0..<400 {
            _ = try await source.fill("job", ["title": .text("Job \(index)"), "notes": .text(String(repeating: "n", count: 200))], submit: true)
        }
        try await source.sync()

        let target = TemporaryDirectory("crash-device")
        var random = SplitMix64(seed: UInt64(Date().timeIntervalSince1970))
        var kills = 0
        for _ in 0..<5 {
            let pages = Int(1 + random.next() % 4)
            let output = try await Self.runDriver(home: target.path, url: fixture.server.url, project: fixture.project, token: token, killAfterPages: pages)
            if !output.contains("DONE") { kills += 1 }
        }
        #expect(kills >= 3)
        let store = try DraftStore(home: target.url)
        #expect(try await store.integrityCheck() == "ok")
        #expect(try await store.syncCursor() > 0)
        var configuration = SyncConfiguration(serverURL: fixture.server.url, project: fixture.project, token: token)
        configuration.pullPageSize = 25
        let device = try TestDevice(configuration: configuration, home: target)
        let summary = try await device.sync()
        #expect(summary.pulled <= 400)
        #expect(try await device.store.records().count == 400)
        try await Convergence.check([source, device], server: fixture, token: token)
    }

    /// Runs the crash driver and SIGKILLs it once it has reported `killAfterPages` applied pages.
    static func runDriver(home: String, url: String, project: String, token: String, killAfterPages: Int) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: PackagePaths.debugProduct("fieldsheet-sync-crashdriver"))
        process.arguments = [home, url, project, token, "25"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let lines = PipeCollector(pipe.fileHandleForReading)
        func pages() -> Int { lines.text.split(separator: "\n").filter { $0.hasPrefix("PAGE") }.count }
        _ = await eventually(timeout: 60) { pages() >= killAfterPages || !process.isRunning }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        await process.ended(within: 30)
        _ = await eventually(timeout: 10) { lines.reachedEnd }
        return lines.text
    }
}

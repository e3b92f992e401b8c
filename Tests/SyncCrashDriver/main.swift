// fieldsheet-sync-crashdriver HOME URL PROJECT TOKEN PAGE_SIZE
//
// A child process for SyncCrashTests: syncs the device home at HOME with small pull pages and reports
// each applied page on standard output ("PAGE pulled-so-far", one write(2) each), then "DONE".
// The test SIGKILLs it at a random page, while the next page is being applied.
import DraftStore
import Foundation
import Logging
import SyncClient

func emit(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { buffer in _ = write(1, buffer.baseAddress, buffer.count) }
}

let arguments = CommandLine.arguments
guard arguments.count == 6, let pageSize = Int(arguments[5]) else {
    FileHandle.standardError.write(Data("usage: fieldsheet-sync-crashdriver HOME URL PROJECT TOKEN PAGE_SIZE\n".utf8))
    exit(64)
}
do {
    let store = try DraftStore(home: URL(fileURLWithPath: arguments[1]))
    var configuration = SyncConfiguration(serverURL: arguments[2], project: arguments[3], token: arguments[4])
    configuration.pullPageSize = pageSize
    var logger = Logger(label: "crashdriver")
    logger.logLevel = .critical
    let engine = SyncEngine(store: store, transport: CurlTransport(), configuration: configuration, logger: logger)
    var last = -1
    for try await event in engine.events() where event.phase == .pulling && event.pulled > 0 && event.pulled != last {
        last = event.pulled
        emit("PAGE \(event.pulled)")
    }
    emit("DONE")
} catch {
    FileHandle.standardError.write(Data("crashdriver: \(error)\n".utf8))
    exit(1)
}

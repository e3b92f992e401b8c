import ArgumentParser
import DraftStore
import Foundation
import FormModel
import SyncClient

extension FieldSheetCommand {
    /// `fieldsheet sync`.
    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send this device's changes to the server and fetch everyone else's.",
            discussion: """
                Shows a progress bar on a terminal and prints one summary line ("pushed 12, pulled 340, 1 conflict"). \
                Exit status: 0 synced; 1 device database error; 2 not logged in; 3 server unreachable (everything \
                stays queued); 4 token or project refused; 5 the server refused or failed; 6 the secure connection \
                failed (certificate, host name, CA file, or no TLS at that address; not retried).
                """)

        @OptionGroup var home: HomeOptions

        @Option(help: "Give up after this many seconds of retrying an unreachable server.")
        var timeout: Double = 30

        @Option(name: .customLong("download-attachments"), help: AttachmentDownloads.syncOptionHelp)
        var attachmentDownloads: AttachmentDownloads?

        func run() async throws {
            try await reportingSyncErrors {
                let login = try home.requireLogin()
                let store = try home.openStore()
                var configuration = login.configuration
                configuration.retry.deadline = timeout
                if let attachmentDownloads { configuration.attachmentDownloads = attachmentDownloads }
                let engine = SyncEngine(store: store, transport: CurlTransport(options: login.transportOptions), configuration: configuration, logger: syncLogger())
                let started = Date()
                let bar = isatty(STDOUT_FILENO) == 1 ? ProgressBar() : nil
                var last = SyncEvent(phase: .forms)
                do {
                    for try await event in engine.events() {
                        last = event
                        bar?.draw(event)
                    }
                } catch {
                    bar?.clear()
                    throw error
                }
                bar?.clear()
                let status = try await store.syncStatus()
                let summary = SyncSummary(pushed: last.pushed, pulled: last.pulled, conflicts: last.conflicts, openConflicts: status.openConflicts, retries: 0)
                print(summary.description)
                // Changes the server refused: the record keeps the server's value, and the person learns why (once
                // per refused change, not once per field of it).
                let refused = try await store.conflicts(detectedSince: started).filter { $0.policy == "rejected" }
                var told = Set<String>()
                for conflict in refused {
                    let record = conflict.recordID.lowercased
                    guard told.insert(record + "\u{0}" + (conflict.reason ?? "")).inserted else { continue }
                    let fields = refused.filter { $0.recordID == conflict.recordID && $0.reason == conflict.reason }.map(\.fieldID)
                    warn("the server refused a change to record \(record) (\(fields.joined(separator: ", "))); the record keeps the server's value (see `fieldsheet conflicts --all`). Why: \(conflict.reason ?? "the server gave no reason.")")
                }
            }
        }
    }
}

/// A one-line progress bar redrawn in place on a terminal.
struct ProgressBar {
    func draw(_ event: SyncEvent) {
        var line: String
        switch event.phase {
        case .forms: line = "fetching forms"
        case .pulling: line = "pulling: \(event.pulled) records"
        case .pushing:
            let total = max(event.pushTotal ?? 0, 1)
            let filled = min(30, event.pushed * 30 / total)
            line = "pushing [" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled) + "] \(event.pushed)/\(event.pushTotal ?? 0)"
        case .uploading:
            let total = max(event.uploadBytesTotal, 1)
            let filled = Int(min(30, event.uploadedBytes * 30 / total))
            line = "uploading [" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled) + "] \(event.uploaded)/\(event.uploadTotal ?? 0) attachments, \(AttachmentReference.formatSize(event.uploadedBytes)) of \(AttachmentReference.formatSize(event.uploadBytesTotal))"
        case .downloading: line = "downloading: \(event.downloaded)/\(event.downloadTotal ?? 0) attachments"
        case .done: line = "done"
        }
        if let retry = event.retrying { line += " — \(retry)" }
        FileHandle.standardOutput.write(Data("\r\u{1B}[K\(TerminalText.visible(line))".utf8))
    }

    func clear() {
        FileHandle.standardOutput.write(Data("\r\u{1B}[K".utf8))
    }
}

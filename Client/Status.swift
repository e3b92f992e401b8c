import ArgumentParser
import DraftStore
import Foundation
import FormModel
import SyncClient

extension FieldSheetCommand {
    /// `fieldsheet status`.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the server this device syncs with, queued changes and attachments to upload, the last sync and open conflicts.")

        @OptionGroup var home: HomeOptions

        func run() async throws {
            try await reportingSyncErrors {
                let store = try home.openStore()
                let status = try await store.syncStatus()
                let login = try? DeviceLogin.load(from: home.directory)
                print("server: \(login.map { "\($0.serverURL) (project \($0.project))" } ?? "not logged in")")
                if try await store.isSignedOut() {
                    print("signed out: \(SyncError.signedOutMessage) Log in again with a new code to send what waits.")
                }
                print("device: \(status.deviceID)")
                if let login { print("attachment downloads: \(login.attachmentDownloads.rawValue) (\(login.attachmentDownloads.summary))") }
                print("queued: \(status.queuedChanges) change\(status.queuedChanges == 1 ? "" : "s") in \(status.queuedRecords) record\(status.queuedRecords == 1 ? "" : "s")")
                let uploads = status.waitingUploads
                print("attachments to upload: \(uploads.count)\(uploads.count > 0 ? " (\(AttachmentReference.formatSize(uploads.bytes)))" : "")")
                if status.wantedDownloads > 0 { print("attachments to download: \(status.wantedDownloads)") }
                if status.recordsWaitingForAttachments > 0 {
                    print("records waiting for attachments on the server: \(status.recordsWaitingForAttachments)")
                }
                let formatter = ISO8601DateFormatter()
                print("last sync: \(status.lastSync.map(formatter.string(from:)) ?? "never")")
                print("open conflicts: \(status.openConflicts)")
            }
        }
    }
}

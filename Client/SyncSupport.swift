import ArgumentParser
import DraftStore
import Foundation
import Logging
import SyncClient

/// Exit statuses of the sync commands (login, sync), documented in `fieldsheet --help`.
enum SyncExit {
    /// Not logged in, or the login file cannot be read.
    static let notLoggedIn: Int32 = 2
    /// The server could not be reached; everything stays queued.
    static let unreachable: Int32 = 3
    /// The server refused the token or the project.
    static let unauthorized: Int32 = 4
    /// The server refused a request, failed, or answered something unreadable.
    static let serverError: Int32 = 5
    /// The secure connection failed (certificate, host name, CA file, or no TLS there); not retried.
    static let tls: Int32 = 6

    /// The exit status for a failed sync.
    static func code(for error: SyncError) -> Int32 {
        switch error.code {
        case .unreachable: return unreachable
        case .unauthorized, .signedOut: return unauthorized
        case .refused, .serverError: return serverError
        case .tls: return tls
        case .storage, .noProjectKey: return 1
        }
    }
}

/// `--download-attachments ahead|on-open` on `login` and `sync`.
extension AttachmentDownloads: ExpressibleByArgument {}

extension AttachmentDownloads {
    /// The help of `--download-attachments`.
    static let optionHelp = ArgumentHelp(
        "When to download the photos and files of records pulled from the server: ahead (every sync fetches all of them, for working offline) or on-open (those of a record once it is opened, then at the next sync; saves storage and data).",
        valueName: "ahead|on-open")
    /// The help of `sync --download-attachments`: for this run only.
    static let syncOptionHelp = ArgumentHelp(
        "For this sync only, instead of the choice saved by `fieldsheet login`: ahead (fetch every photo and file of the records on this device) or on-open (only those of records opened since).",
        valueName: "ahead|on-open")
}

/// A logger for the sync library: warnings and above on standard error (`FIELDSHEET_LOG=debug` for more).
func syncLogger() -> Logger {
    var logger = Logger(label: "fieldsheet.sync") { label in StreamLogHandler.standardError(label: label) }
    logger.logLevel = ProcessInfo.processInfo.environment["FIELDSHEET_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
    return logger
}

extension HomeOptions {
    /// The stored login, or exit status 2 with how to log in.
    func requireLogin() throws -> DeviceLogin {
        do {
            guard let login = try DeviceLogin.load(from: directory) else {
                warn("error: this device has not logged in to a server. Run `fieldsheet login URL --project P --token T` first.")
                throw ExitCode(SyncExit.notLoggedIn)
            }
            return login
        } catch let error as LoginError {
            warn("error: \(error.description)")
            throw ExitCode(SyncExit.notLoggedIn)
        }
    }
}

/// Runs a sync command body, turning a `SyncError` into its message and documented exit status.
func reportingSyncErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await reportingErrors(body)
    } catch let error as SyncError {
        warn("error: \(error.message)")
        throw ExitCode(SyncExit.code(for: error))
    }
}

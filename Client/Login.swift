import ArgumentParser
import DraftStore
import Foundation
import SyncClient

extension FieldSheetCommand {
    /// `fieldsheet login URL --project P --token T` (or `FIELDSHEET_TOKEN`), or `fieldsheet login --server URL --code CODE`.
    struct Login: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Connect this device to a FieldSheet server and fetch the project's forms.",
            discussion: """
                With --code, a one-time login code from the project's admin (the web console's person page, or \
                `fieldsheet-server user code`) is exchanged for this device's own token, and the project is the code's. \
                The token (from the code, or from `fieldsheet-server user add`) is kept in the home directory in login.json, readable \
                by you only (mode 0600), and never printed. Give it with --token or in FIELDSHEET_TOKEN (which keeps \
                it out of the shell history). When the server cannot be reached the login is kept and checked at the \
                next sync; when the secure connection fails (the certificate, its host name, the CA file, or https to \
                a server without TLS) nothing is kept and the exit status is 6. Proxies: libcurl honours http_proxy, https_proxy and no_proxy. \
                --download-attachments is saved with the login (default on-open; logging in again without it keeps \
                the saved choice); `fieldsheet status` shows it and `fieldsheet sync --download-attachments` \
                overrides it for one run.
                """)

        @OptionGroup var home: HomeOptions
        @Argument(help: "The server's URL, e.g. https://sync.example.org (or give it with --server).") var url: String?
        @Option(name: .customLong("server"), help: "The server's URL (instead of the argument).") var server: String?
        @Option(help: "The project to sync (with --code: the code's).") var project: String?
        @Option(help: "The access token (default: $FIELDSHEET_TOKEN).") var token: String?
        @Option(help: "A one-time login code from the project's admin, like K7QM3-XW9TP.") var code: String?
        @Option(name: .customLong("ca-file"), help: "A PEM file of certificate authorities, for a server with a private CA.") var caFile: String?
        @Option(name: .customLong("download-attachments"), help: AttachmentDownloads.optionHelp) var attachmentDownloads: AttachmentDownloads?

        /// The server's URL, from the argument or `--server`.
        var serverURL: String { url ?? server ?? "" }

        func validate() throws {
            guard (url == nil) != (server == nil) else {
                throw ValidationError("Give the server's URL once: as the argument or with --server.")
            }
            guard serverURL.hasPrefix("http://") || serverURL.hasPrefix("https://") else {
                throw ValidationError("The server URL must start with http:// or https:// (got \"\(serverURL)\").")
            }
            if code != nil {
                guard token == nil else { throw ValidationError("Give either --code or --token, not both.") }
            } else if project == nil {
                throw ValidationError("Give the project with --project (or log in with --code, which names it).")
            }
            if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
                throw ValidationError("The CA file \(caFile) cannot be read (no such file, or not readable): give a PEM file of certificate authorities.")
            }
        }

        func run() async throws {
            try await reportingSyncErrors {
                let store = try home.openStore()
                // A login again (a new token, another server) keeps the device's saved choice unless told otherwise.
                let saved = (try? DeviceLogin.load(from: home.directory))?.attachmentDownloads
                var login: DeviceLogin
                if let code {
                    var options = TransportOptions()
                    options.caFile = caFile
                    login = try await DeviceLogin.exchange(
                        code: code, serverURL: serverURL, deviceName: ProcessInfo.processInfo.hostName, transport: CurlTransport(options: options),
                        caFile: caFile, store: store)
                    if let project, project != login.project {
                        warn("note: the code is for the project \(login.project), not \(project); this device syncs \(login.project).")
                    }
                    // The device's token exists now: keep it before anything else can fail.
                    login.attachmentDownloads = attachmentDownloads ?? saved ?? .onOpen
                    try save(login)
                } else {
                    guard let token = token ?? ProcessInfo.processInfo.environment["FIELDSHEET_TOKEN"], !token.isEmpty else {
                        throw ValidationError("Give the access token with --token or in FIELDSHEET_TOKEN, or a login code with --code.")
                    }
                    login = DeviceLogin(serverURL: serverURL, project: project ?? "", token: token, caFile: caFile,
                                        attachmentDownloads: attachmentDownloads ?? saved ?? .onOpen)
                }
                let engine = SyncEngine(store: store, transport: CurlTransport(options: login.transportOptions), configuration: login.configuration, logger: syncLogger())
                do {
                    try await engine.checkLogin()
                } catch let error as SyncError where error.code == .unreachable {
                    try save(login)
                    warn("warning: the server could not be reached; the login was kept and will be checked at the next sync. (\(error.message))")
                    return
                }
                try save(login)
                let forms = try await store.forms()
                print("logged in to \(login.serverURL) as a member of \(login.project); \(forms.count) form\(forms.count == 1 ? "" : "s") on this device")
            }
        }

        func save(_ login: DeviceLogin) throws {
            do {
                try login.save(in: home.directory)
            } catch let error as LoginError {
                warn("error: \(error.description)")
                throw ExitCode(1)
            }
        }
    }
}

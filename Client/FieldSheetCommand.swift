import ArgumentParser
import SyncClient

/// `fieldsheet`: the terminal client. Each subcommand lives in its own file as an extension.
@main
struct FieldSheetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fieldsheet",
        abstract: "Fill FieldSheet forms on this device, offline first.",
        discussion: """
            Forms open as modal sheets; everything typed is saved on the device at once.
            Only an explicit Cancel (confirmed) throws anything away.
            Every command takes --home DIR (default $FIELDSHEET_HOME, else ~/.fieldsheet).

            Exit status of fill, resume and edit: 0 submitted; 1 error (nothing saved was damaged); \
            2 --complete refused by validation (draft kept); 3 kept as a draft; 4 discarded.

            Syncing: `login URL --project P` once, then `sync` whenever there is a network. Exit status of sync: \
            0 synced; 1 device database error; 2 not logged in; 3 server unreachable (everything stays queued); \
            4 token or project refused; 5 the server refused or failed; 6 the secure connection failed (certificate, \
            host name, CA file, or no TLS at that address; not retried). `status` shows what is queued, \
            `conflicts` what waits for you, `resolve` settles it.
            """,
        subcommands: [Forms.self, Form.self, Fill.self, Resume.self, Edit.self, Records.self, Show.self, DeleteDraft.self, Lint.self, Preview.self, Login.self, Sync.self, Status.self, Conflicts.self, Resolve.self, Entities.self]
    )

    /// `--home DIR` given before the subcommand (`fieldsheet --home DIR records`).
    @OptionGroup var home: HomeOptions

    @OptionGroup var interface: InterfaceOptions

    /// No subcommand: the full-screen app on a terminal.
    func run() async throws {
        guard interface.fullScreen else {
            print(Self.helpMessage())
            warn("\nThe full-screen app needs a terminal (and TERM other than dumb). Use the commands above, e.g. `fieldsheet fill FORM` for line mode.")
            throw ExitCode(64)
        }
        try await reportingErrors {
            let status = try await interface.runApp(store: home.openStore(), login: try? DeviceLogin.load(from: home.directory))
            throw ExitCode(status)
        }
    }
}

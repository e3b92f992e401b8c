import ArgumentParser
import ServerCore

/// `fieldsheet-server`: the team's sync server.
@main
struct FieldSheetServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fieldsheet-server",
        abstract: "The FieldSheet sync server.",
        discussion: """
            Run `serve` to accept devices; the other commands administer the same data directory or database \
            (they may run while the server does). The data directory is --data DIR, else $FIELDSHEET_DATA, \
            else /var/lib/fieldsheet: it never depends on the directory or the user the command runs from.

            Exit status: 0 success; 1 the request was refused or failed (the reason is on stderr); \
            64 the command line was wrong.
            """,
        subcommands: [Serve.self, Project.self, User.self, Token.self, Form.self, Export.self, Attachments.self, Entities.self, Webhooks.self, Audit.self, Records.self]
    )
}

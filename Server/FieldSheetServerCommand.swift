import ArgumentParser
import ServerCore

/// `fieldsheet-server`: the team's sync server.
@main
struct FieldSheetServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fieldsheet-server",
        abstract: "The FieldSheet sync server.",
        subcommands: []
    )
}

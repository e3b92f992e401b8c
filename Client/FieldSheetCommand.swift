import ArgumentParser

/// `fieldsheet`: the terminal client. Each subcommand lives in its own file as an extension.
@main
struct FieldSheetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fieldsheet",
        abstract: "Fill FieldSheet forms on this device, offline first.",
        discussion: """
            Forms open as modal sheets; everything typed is saved on the device at once.
            Only an explicit Cancel (confirmed) throws anything away.
            """,
        subcommands: [Lint.self, Preview.self]
    )
}

import Foundation
import PackagePlugin

/// Compiles the contract files of `Schema/` that a target needs into Swift constants at build time
/// (the `schema-constants` tool writes them), so each contract is kept once, in `Schema/`, and every binary
/// carries what it needs without resource files beside it.
@main
struct SchemaConstants: BuildToolPlugin {
    /// The `Schema/` files each target compiles in, and the Swift type each becomes.
    static let files: [String: [(file: String, type: String)]] = [
        "FormModel": [("form-definition.schema.json", "FormDefinitionSchema")],
        "DraftStore": [("device-migrations.sql", "DeviceSchema")],
        "ServerSQLite": [("server-sqlite.sql", "SQLiteSchema")],
        "ServerPostgres": [("server-postgres.sql", "PostgresSchema")],
    ]

    struct UnknownTarget: Error, CustomStringConvertible {
        var target: String
        var description: String {
            "The SchemaConstants plugin lists no Schema/ file for the target \(target). Add the target and its files to SchemaConstants.files in Plugins/SchemaConstants/SchemaConstants.swift, or remove the plugin from the target."
        }
    }

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let files = Self.files[target.name] else { throw UnknownTarget(target: target.name) }
        let tool = try context.tool(named: "schema-constants")
        return files.map { entry in
            let input = context.package.directoryURL.appending(components: "Schema", entry.file)
            let output = context.pluginWorkDirectoryURL.appending(component: "\(entry.type).swift")
            return .buildCommand(
                displayName: "Compiling Schema/\(entry.file) into \(entry.type)",
                executable: tool.url,
                arguments: [input.path, output.path, entry.type],
                inputFiles: [input],
                outputFiles: [output]
            )
        }
    }
}

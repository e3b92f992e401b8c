import ArgumentParser
import Foundation
import ServerCore
import ServerStorage

extension FieldSheetServerCommand {
    /// `audit [--project P] [--actor A] [--action X] [--from DAY] [--to DAY]`: the audit log as JSON Lines.
    struct Audit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the audit log as JSON Lines, newest first.",
            discussion: """
                One object a line: id, at (ISO 8601, UTC), actor, address, project, action, subject and detail — the same \
                lines as the console's "Download as JSON Lines". Without --project it prints every project's entries and \
                those of no project (sign-ins, projects created). The log is read only; see docs/audit-log.md for the \
                actions recorded.
                """)
        @OptionGroup var data: DataOptions
        @Option(help: "Only this project's entries.") var project: String?
        @Option(help: "Only the acts of this user (\"command line\" for fieldsheet-server's own).") var actor: String?
        @Option(help: ArgumentHelp("Only this action, e.g. form.published.", valueName: "action")) var action: String?
        @Option(help: ArgumentHelp("From this UTC day on (yyyy-MM-dd).", valueName: "day")) var from: String?
        @Option(help: ArgumentHelp("Up to and including this UTC day (yyyy-MM-dd).", valueName: "day")) var to: String?

        func validate() throws {
            for (name, value) in [("--from", from), ("--to", to)] {
                if let value, AuditLines.day(value) == nil {
                    throw ValidationError("\(name) is \"\(value)\"; give a day as yyyy-MM-dd (UTC), e.g. 2026-03-31.")
                }
            }
        }

        func run() async throws {
            try await reportingFailures {
                try await data.withStorage { storage in
                    var query = AuditQuery(actor: actor, action: action.map { AuditAction($0) })
                    if let project { query.projectID = try await data.project(project, in: storage).id }
                    query.since = from.flatMap(AuditLines.day)
                    query.until = to.flatMap(AuditLines.day).map { $0.addingTimeInterval(86_400) }
                    let names = Dictionary(uniqueKeysWithValues: try await storage.projects().map { ($0.id, $0.name) })
                    try await AuditLines.read(query, from: storage) { entries in
                        var out = [UInt8]()
                        for entry in entries {
                            out += AuditLines.line(entry, project: entry.event.projectID.flatMap { names[$0] })
                            out.append(UInt8(ascii: "\n"))
                        }
                        FileHandle.standardOutput.write(Data(out))
                    }
                }
            }
        }
    }
}

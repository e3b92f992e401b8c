import ArgumentParser
import Foundation
import ServerCore
import ServerStorage

extension FieldSheetServerCommand {
    /// `records verify`: checks records' hash-chained, signed histories.
    struct Records: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check records' histories.",
            subcommands: [Verify.self])

        /// `records verify --project P [--record ID] [--quiet]`.
        struct Verify: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Check that each record's history is whole, and show which device wrote each change.",
                discussion: """
                    Walks each record's history in the order it was written. Every entry carries the SHA-256 of the entry \
                    before it and of its own content, so an entry changed in the database no longer matches its hash, and one \
                    removed breaks the link of the next. Every change a device signed keeps its signature and the mutation it \
                    signed, checked here with the public key the device registered at login. Prints, per record, "whole" or \
                    "BROKEN" and one line per entry: revision, kind, time (UTC), person, device, and the signature: \
                    "signed", "unsigned" (a device that registered no key), "NOT COUNTING" (signed after the device was \
                    signed out), "INVALID" (with the reason), or "server" (a review or resolution). Entries written before \
                    the chain existed are marked "before chain". See docs/signed-submissions.md.

                    Exit status: 0 every history checked is whole; 2 at least one is broken (its entries say where); \
                    1 the check could not run (an unknown project or record, the database unreachable); 64 the command \
                    line was wrong.
                    """)
            @OptionGroup var data: DataOptions
            @Option(help: "The project whose records to check.") var project: String
            @Option(help: ArgumentHelp("Only this record (its id).", valueName: "id")) var record: String?
            @Flag(help: "Print only broken records, and the summary.") var quiet = false

            func validate() throws {
                if let record, UUID(text: record) == nil {
                    throw ValidationError("--record is \"\(record)\"; give a record id (a UUID, like 6b1d1a5e-9f0b-4d0b-9e55-1a2b3c4d5e6f).")
                }
            }

            func run() async throws {
                var broken = false
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let info = try await data.project(project, in: storage)
                        let recordID = record.flatMap(UUID.init(text:))
                        let summary = try await HistoryVerifier(storage: storage).verify(projectID: info.id, recordID: recordID) { verified in
                            if !quiet || !verified.isWhole { print(Self.lines(verified), terminator: "") }
                        }
                        if let record, summary.records == 0 {
                            throw CommandFailure("The project \(info.name) has no history for record \(record.lowercased()).")
                        }
                        print("""
                            \(summary.records) record\(summary.records == 1 ? "" : "s"): \(summary.records - summary.broken) whole, \(summary.broken) broken; \
                            \(summary.entries) entr\(summary.entries == 1 ? "y" : "ies"): \(summary.signed) signed, \(summary.unsigned) unsigned, \
                            \(summary.notCounting) not counting (signed after the device was signed out), \(summary.beforeChain) before the chain
                            """)
                        broken = summary.broken > 0
                    }
                }
                if broken { throw ExitCode(2) }
            }

            static func lines(_ record: HistoryVerifier.Record) -> String {
                let time = ISO8601DateFormatter()
                var text = "record \(record.recordID): \(record.isWhole ? "whole" : "BROKEN")\n"
                for entry in record.entries {
                    let device = entry.device.map { "device #\($0.id) \"\($0.name)\" of \($0.userName)" } ?? entry.deviceID.map { "device #\($0) (unknown)" } ?? "-"
                    let signature: String
                    switch entry.signature {
                    case .valid: signature = "signed"
                    case .afterRevocation(let at): signature = "NOT COUNTING (signed after the device was signed out at \(time.string(from: at)))"
                    case .unsigned: signature = "unsigned"
                    case .server: signature = "server"
                    case .invalid(let reason): signature = "INVALID (\(reason))"
                    }
                    var line = "  r\(entry.revision)\t\(entry.kind)\t\(time.string(from: entry.at))\t\(entry.user)\t\(device)\t\(signature)"
                    if entry.beforeChain { line += "\tbefore chain" }
                    if let problem = entry.linkProblem { line += "\tBROKEN: \(problem)" }
                    text += line + "\n"
                }
                return text
            }
        }
    }
}

import ArgumentParser
import FormModel
import Foundation
import XLSForm

extension FieldSheetCommand {
    /// `fieldsheet form convert FORM.xlsx`: an XLSForm workbook as a FieldSheet form definition.
    struct Form: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Work with form files: convert an XLSForm workbook to a form definition.",
            subcommands: [Convert.self]
        )

        struct Convert: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print the FieldSheet form definition (JSON) an XLSForm workbook (.xlsx) converts to.",
                discussion: """
                    Reads the survey, choices and settings sheets: question types, labels, hints, required, relevant, \\
                    constraint (with its message), calculation, default, choice_filter, repeat_count and the \\
                    appearances multiline and field-list; top-level groups become pages. Expressions are translated \\
                    from XLSForm's XPath to FieldSheet's expression language; what cannot be translated is an error \\
                    naming the cell (survey!F12), never a dropped condition. What is not imported (other languages, \\
                    required_message, unknown appearances, metadata rows) is a warning.

                    The definition is checked as `fieldsheet lint` checks a form, and written only when it has no \\
                    errors, so it can be kept, edited and imported as JSON.
                    Exit status: 0 converted (warnings on standard error); 1 errors (nothing written).
                    """
            )

            @Argument(help: "An XLSForm workbook (.xlsx).", completion: .file(extensions: ["xlsx"]))
            var file: String

            @Option(name: .shortAndLong, help: "Write the definition to this file instead of standard output.", completion: .file(extensions: ["json"]))
            var output: String?

            @Flag(name: .long, help: "Print only errors, not warnings.")
            var quiet = false

            func run() throws {
                let result = XLSFormImporter().load(contentsOf: file)
                for finding in result.findings where !quiet || finding.severity == .error {
                    warn(finding.description)
                }
                guard result.loaded != nil, let definition = result.definition else {
                    let errors = result.findings.filter { $0.severity == .error }.count
                    warn("Not converted: fix the \(errors == 1 ? "error" : "\(errors) errors") above and convert again.")
                    throw ExitCode(1)
                }
                if let output {
                    do {
                        try Data(definition.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
                    } catch {
                        warn("Cannot write \(output): \(error.localizedDescription). Check that its directory exists and is writable.")
                        throw ExitCode(1)
                    }
                    warn("converted \(file) to \(output)")
                } else {
                    FileHandle.standardOutput.write(Data(definition.utf8))
                }
            }
        }
    }
}

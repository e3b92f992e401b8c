import ArgumentParser
import Foundation
import FormModel
import XLSForm

extension FieldSheetCommand {
    /// `fieldsheet lint FILE…`: checks forms against the schema and the presentation guidelines.
    struct Lint: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check form definitions (.json) and XLSForm workbooks (.xlsx) against the JSON Schema and the modal-presentation guidelines.",
            discussion: """
                Each finding names its rule, the file with line and column, the JSON path, what is wrong and how to fix it; \
                for a workbook, the cell instead (form.xlsx: error[rule] survey!B14: …). A workbook is converted as \
                `fieldsheet form convert` does, then checked like the JSON it converts to.
                Forms given together are also checked as one app's forms (consistent transitions, no stacked popovers).
                Exit status: 0 when no errors (warnings allowed), 1 when any form has errors.
                """
        )

        @Argument(help: "Form definition files (.json) or XLSForm workbooks (.xlsx).", completion: .file(extensions: ["json", "xlsx"]))
        var files: [String]

        @Flag(name: .long, help: "Print only errors, not warnings.")
        var quiet = false

        func run() throws {
            let findings = FormFiles().lint(files: files)
            let shown = quiet ? findings.filter { $0.severity == .error } : findings
            for finding in shown.sorted(by: Self.order) {
                print(finding)
            }
            let errors = findings.filter { $0.severity == .error }.count
            let warnings = findings.count - errors
            let summary = "\(files.count) form\(files.count == 1 ? "" : "s") checked: \(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
            FileHandle.standardError.write(Data((summary + "\n").utf8))
            if errors > 0 { throw ExitCode(1) }
        }

        static func order(_ a: Finding, _ b: Finding) -> Bool {
            (a.file, a.location?.line ?? 0, a.location?.column ?? 0) < (b.file, b.location?.line ?? 0, b.location?.column ?? 0)
        }
    }
}

import ArgumentParser
import DraftStore
import FormModel
import Foundation
import XLSForm

extension FieldSheetCommand {
    /// `fieldsheet forms`: the forms stored on this device; `forms import FILE…` adds some.
    struct Forms: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the forms on this device, or import form definitions.",
            subcommands: [List.self, Import.self],
            defaultSubcommand: List.self
        )

        /// `fieldsheet forms list`: id, newest version, title; tab-separated.
        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List stored forms: id, newest version, title (tab-separated).")

            @OptionGroup var home: HomeOptions

            func run() async throws {
                try await reportingErrors {
                    let forms = try await home.openStore().forms()
                    if forms.isEmpty { warn("No forms on this device yet; import one with `fieldsheet forms import FILE`.") }
                    for form in forms {
                        print("\(form.id)\tv\(form.version)\t\(form.title)")
                    }
                }
            }
        }

        /// `fieldsheet forms import FILE…`: all or nothing.
        struct Import: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Import form definitions (.json) or XLSForm workbooks (.xlsx); all or nothing.",
                discussion: """
                    Each file is checked as `fieldsheet lint` does; when any has an error, every finding is printed and \
                    nothing is imported (exit 1). A workbook is converted as `fieldsheet form convert` does; its \
                    warnings (what was not imported) are printed and do not stop the import.
                    """
            )

            @OptionGroup var home: HomeOptions

            @Argument(help: "Form definition files (.json) or XLSForm workbooks (.xlsx).", completion: .file(extensions: ["json", "xlsx"]))
            var files: [String]

            func run() async throws {
                let loader = FormFiles()
                var forms: [FormDefinition] = []
                var errors: [Finding] = []
                for file in files {
                    let result = loader.load(contentsOf: file)
                    errors += result.findings.filter { $0.severity == .error }
                    if XLSFormImporter.isWorkbook(file) {
                        result.findings.filter { $0.severity == .warning }.forEach { warn($0.description) }
                    }
                    if let form = result.loaded?.form { forms.append(form) }
                }
                if !errors.isEmpty {
                    errors.forEach { warn($0.description) }
                    warn("Nothing was imported: fix the \(errors.count == 1 ? "error" : "\(errors.count) errors") above and import again.")
                    throw ExitCode(1)
                }
                try await reportingErrors {
                    for outcome in try await home.openStore().importForms(forms) {
                        switch outcome {
                        case .imported(let form): print("imported\t\(form.id)\tv\(form.version)")
                        case .unchanged(let form): print("unchanged\t\(form.id)\tv\(form.version)")
                        }
                    }
                }
            }
        }
    }
}

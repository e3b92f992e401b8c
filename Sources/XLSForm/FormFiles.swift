import Foundation
import FormModel

/// Loads form files of either kind, JSON definitions and XLSForm workbooks, and lints them together: what the
/// commands that take form files (`lint`, `forms import`, `form publish`) share.
public struct FormFiles: Sendable {
    public init() {}

    /// One file's form and findings; a workbook's findings name cells.
    public func load(contentsOf path: String) -> FormLoadResult {
        XLSFormImporter.isWorkbook(path) ? XLSFormImporter().load(contentsOf: path).loadResult : FormLoader().load(contentsOf: path)
    }

    /// A workbook converted, loaded and linted on its own: its definition (when it has no error) and every
    /// finding, each naming its cell. What `form publish` checks before it publishes the definition.
    public func checkWorkbook(_ path: String, linter: FormLinter = FormLinter()) -> (definition: String?, findings: [Finding]) {
        check(XLSFormImporter().load(contentsOf: path), linter: linter)
    }

    /// A workbook given as the bytes of its .xlsx file (an upload), named `file` in the findings, checked as
    /// ``checkWorkbook(_:linter:)`` checks one on disk.
    public func checkWorkbook(data: Data, file: String, linter: FormLinter = FormLinter()) -> (definition: String?, findings: [Finding]) {
        let importer = XLSFormImporter()
        let workbook: Workbook
        do {
            workbook = try WorkbookReader(limits: importer.limits).read(data, sheets: XLSFormImporter.readsSheet)
        } catch {
            return (nil, [Finding(.error, rule: "xlsform-workbook", file: file, path: .root, message: error.message, fix: error.fix, cell: error.place ?? "workbook")])
        }
        return check(importer.load(workbook, file: file), linter: linter)
    }

    private func check(_ result: XLSFormImporter.Result, linter: FormLinter) -> (definition: String?, findings: [Finding]) {
        guard let loaded = result.loaded, let conversion = result.conversion else { return (nil, result.findings) }
        let findings = result.findings + linter.lint([loaded]).map { XLSFormImporter.relocate($0, conversion) }
        return (findings.hasErrors ? nil : result.definition, findings)
    }

    /// Every file loaded and the set linted, as `FormLinter.lint(files:)` does, with the linter's findings about
    /// a workbook's form naming its cells.
    public func lint(files: [String], linter: FormLinter = FormLinter()) -> [Finding] {
        var findings: [Finding] = []
        var forms: [LoadedForm] = []
        var conversions: [String: XLSFormConversion] = [:]
        for file in files {
            if XLSFormImporter.isWorkbook(file) {
                let result = XLSFormImporter().load(contentsOf: file)
                findings += result.findings
                if let loaded = result.loaded { forms.append(loaded) }
                if let conversion = result.conversion { conversions[file] = conversion }
            } else {
                let result = FormLoader().load(contentsOf: file)
                findings += result.findings
                if let loaded = result.loaded { forms.append(loaded) }
            }
        }
        return findings + linter.lint(forms).map { finding in
            conversions[finding.file].map { XLSFormImporter.relocate(finding, $0) } ?? finding
        }
    }
}

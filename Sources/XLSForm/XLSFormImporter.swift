import Foundation
import FormModel

/// Imports XLSForm workbooks: reads the .xlsx, converts it, then loads the definition as any JSON form is
/// loaded (the JSON Schema, the form checker), so a workbook gets the findings a JSON form would, each naming
/// the cell (`survey!B14`) it is about rather than a line of JSON.
public struct XLSFormImporter: Sendable {
    public var limits: WorkbookLimits

    public init(limits: WorkbookLimits = WorkbookLimits()) {
        self.limits = limits
    }

    /// Whether `path` names a workbook this importer reads (by its extension).
    public static func isWorkbook(_ path: String) -> Bool {
        path.lowercased().hasSuffix(".xlsx")
    }

    /// The outcome of importing one workbook.
    public struct Result: Sendable {
        /// The form, loaded and checked, when there is no error.
        public var loaded: LoadedForm?
        /// The definition as JSON text, when the workbook converted (even if the form then has errors).
        public var definition: String?
        /// Every finding, conversion and loading alike, each naming its cell.
        public var findings: [Finding]
        /// Where each part of the definition came from, for findings made later (the linter's).
        public var conversion: XLSFormConversion?

        /// `FormLoader`'s view of the result.
        public var loadResult: FormLoadResult { FormLoadResult(loaded: loaded, findings: findings) }
    }

    /// The sheets read (any case); the others are only named.
    static let sheetsRead: Set<String> = ["survey", "choices", "external_choices", "settings", "entities"]

    /// Whether the sheet `name` is read: one of `sheetsRead`, or a workbook's only sheet, read whole as its survey.
    static func readsSheet(_ name: String, of names: [String]) -> Bool {
        names.count == 1 || sheetsRead.contains(name.lowercased())
    }

    /// Reads, converts and loads the workbook at `path`.
    public func load(contentsOf path: String) -> Result {
        let workbook: Workbook
        do {
            workbook = try WorkbookReader(limits: limits).read(contentsOf: path, sheets: XLSFormImporter.readsSheet)
        } catch {
            return Result(loaded: nil, definition: nil, findings: [
                Finding(.error, rule: "xlsform-workbook", file: path, path: .root, message: error.message, fix: error.fix, cell: error.place ?? "workbook")
            ], conversion: nil)
        }
        return load(workbook, file: path)
    }

    /// Converts and loads a workbook already read, naming it `file` in findings.
    public func load(_ workbook: Workbook, file: String) -> Result {
        var converter = XLSFormConverter(file: file)
        let conversion = converter.convert(workbook)
        guard let definition = conversion.definition else {
            return Result(loaded: nil, definition: nil, findings: conversion.findings, conversion: conversion)
        }
        let loaded = FormLoader().load(Data(definition.utf8), file: file)
        let findings = conversion.findings + loaded.findings.map { Self.relocate($0, conversion) }
        return Result(loaded: findings.hasErrors ? nil : loaded.loaded, definition: definition, findings: findings, conversion: conversion)
    }

    /// A finding about the converted definition, made to name the cell its JSON path came from.
    public static func relocate(_ finding: Finding, _ conversion: XLSFormConversion) -> Finding {
        guard finding.cell == nil else { return finding }
        var relocated = finding
        relocated.cell = conversion.cell(for: finding.path)
        relocated.location = nil
        relocated.fix = finding.fix + " (The form was converted from the workbook: make the change in the cell named.)"
        // The title is the one required part of a form a workbook may leave out: say where it goes.
        if finding.path.components.count <= 1, finding.message.contains("\"title\"") || finding.rule == "title-missing" {
            relocated.fix = "Set form_title in the settings sheet to the task the form is for, like \"Site Visit\"."
        }
        return relocated
    }
}

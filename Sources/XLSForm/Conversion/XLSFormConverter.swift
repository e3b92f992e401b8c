import Foundation
import FormModel

/// A workbook converted: the form definition's JSON text (nil when an error left nothing sound to write),
/// the findings of the conversion, and the cell of each part of the definition, for findings made later.
public struct XLSFormConversion: Sendable {
    public var definition: String?
    public var findings: [Finding]
    /// The cell each JSON path of the definition came from.
    public var cells: [JSONPath: String]

    /// The cell a finding about `path` is about: the deepest part of the path that came from a cell, or the
    /// survey sheet.
    public func cell(for path: JSONPath) -> String {
        var components = path.components
        while true {
            let prefix = JSONPath(components)
            if let cell = cells[prefix] ?? cells[prefix.appending("id")] { return cell }
            if components.isEmpty { return "survey" }
            components.removeLast()
        }
    }
}

/// Converts an XLSForm workbook (survey, choices and settings sheets) to a FieldSheet form definition.
/// Every finding names the cell it is about; what cannot be translated is an error, what is left out a warning.
struct XLSFormConverter {
    let file: String
    var findings: [Finding] = []
    /// The survey's names and the repeats holding each, once the builder has read them (for `${name}`).
    var surveyNames: [String: SurveyBuilder.NameInfo] = [:]
    /// The form's default language, once chosen (what `label::LANGUAGE` in a choice filter may name).
    var defaultLanguage: String?
    /// The entity list the entities sheet declares, once read (what `save_to`'s `list#property` may name).
    var entityList: String?
    /// The lists of the choices sheet, which an `instance('LIST')/…` lookup does not read as an entity list.
    var choiceListNames: Set<String> = []

    init(file: String) {
        self.file = file
    }

    mutating func error(_ cell: String, _ rule: String, _ message: String, fix: String) {
        findings.append(Finding(.error, rule: rule, file: file, path: .root, message: message, fix: fix, cell: cell))
    }

    mutating func warning(_ cell: String, _ rule: String, _ message: String, fix: String) {
        findings.append(Finding(.warning, rule: rule, file: file, path: .root, message: message, fix: fix, cell: cell))
    }

    mutating func convert(_ workbook: Workbook) -> XLSFormConversion {
        // A workbook of one sheet with type and name columns is read as the survey, as pyxform does.
        let onlySheet = workbook.sheets.count == 1 && workbook.sheetNames.count == 1 ? workbook.sheets.first : nil
        let fallback = onlySheet.flatMap { sheet in
            SheetTable(sheet).columns["type"] != nil && SheetTable(sheet).columns["name"] != nil ? sheet : nil
        }
        if let fallback, workbook.sheet(named: "survey") == nil {
            warning(fallback.name, "xlsform-sheet", "The workbook's only sheet, \"\(fallback.name)\", is read as the survey sheet.",
                    fix: "Name it \"survey\" to silence this.")
        }
        guard let surveySheet = workbook.sheet(named: "survey") ?? fallback else {
            let names = workbook.sheetNames.map { "\"\($0)\"" }.joined(separator: ", ")
            error("survey", "xlsform-sheet", "The workbook has no survey sheet (its sheets: \(names.isEmpty ? "none" : names)).",
                  fix: "Name the sheet that lists the questions \"survey\", with type, name and label columns.")
            return XLSFormConversion(definition: nil, findings: findings, cells: [:])
        }
        var survey = SheetTable(surveySheet)
        let settings = workbook.sheet(named: "settings").map(SheetTable.init)
        let choicesTable = workbook.sheet(named: "choices").map(SheetTable.init)
        let externalTable = workbook.sheet(named: "external_choices").map(SheetTable.init)
        let withOther = Set(survey.rows.compactMap { row -> String? in
            guard let type = survey.value(row, "type"), RowType.otherSuffix(type) > 0, case .question(_, let list?) = RowType(type) else { return nil }
            return list
        })
        for problem in survey.expandLoops(choices: choicesTable, withOther: withOther) {
            error(problem.cell, "xlsform-loop", problem.message, fix: problem.fix)
        }
        for table in [survey, choicesTable].compactMap({ $0 }) {
            if let row = table.unreadRow {
                warning(table.sheet.reference(row: row.number, column: row.cells.keys.min() ?? 0), "xlsform-not-imported",
                        "The rows from \(row.number) on are not read: they come after more than \(SheetTable.maximumEmptyRun) empty rows, where pyxform stops reading the sheet.",
                        fix: "Move them up to the form's other rows, or delete them.")
            }
        }
        for name in workbook.sheetNames where !XLSFormImporter.sheetsRead.contains(name.lowercased()) && name != surveySheet.name {
            warning(name, "xlsform-not-imported", "The sheet \"\(name)\" is not imported (only survey, choices, external_choices, settings and entities are read).",
                    fix: name.lowercased() == "osm" ? "Nothing to do: FieldSheet has no osm questions, whose tags it lists." : "Nothing to do if it holds notes.")
        }
        let entities = readEntities(workbook.sheet(named: "entities").map(SheetTable.init))
        entityList = entities?.list
        guard survey.columns["type"] != nil, survey.columns["name"] != nil else {
            let missing = ["type", "name"].filter { survey.columns[$0] == nil }.joined(separator: " and ")
            error(survey.sheet.reference(row: max(survey.headerRow, 1), column: 0), "xlsform-sheet",
                  "The survey sheet has no \(missing) column in its first row.",
                  fix: "Put the column headers (type, name, label, …) in the survey sheet's first row.")
            return XLSFormConversion(definition: nil, findings: findings, cells: [:])
        }
        let (languages, language) = chooseLanguages(survey: survey, settings: settings, choices: choicesTable, external: externalTable)
        defaultLanguage = language
        let allowDuplicates = settings.flatMap { table in table.rows.first.flatMap { table.value($0, "allow_choice_duplicates") } }.flatMap(SurveyBuilder.flag) ?? false
        var lists = readChoices(choicesTable, language: language, languages: languages, allowDuplicates: allowDuplicates)
        choiceListNames = Set(lists.keys)
        let externalLists = readChoices(externalTable, language: language, languages: languages, allowDuplicates: allowDuplicates)
        // `select_one LIST or_other`: as pyxform does, the list itself gets the choice other ("Other").
        var amended: Set<String> = []
        for row in survey.rows {
            guard let type = survey.value(row, "type"), RowType.otherSuffix(type) > 0, case .question(_, let list?) = RowType(type),
                  lists[list] != nil, amended.insert(list).inserted else { continue }
            lists[list]?.choices.append(.object([("value", .string("other"), survey.cell(row, "type")), ("label", .string("Other"), survey.cell(row, "type"))]))
        }
        var builder = SurveyBuilder(table: survey, language: language, languages: languages, lists: lists, choicesSheet: choicesTable?.sheet.name ?? "choices",
                                    externalLists: externalLists, externalSheet: externalTable?.sheet.name ?? "external_choices")
        let pages = builder.build(into: &self)
        var members = formMembers(settings: settings, pageCount: pages.count)
        members.append(("pages", .array(pages), nil))
        if let entities, let entity = entityMember(entities) { members.append(entity) }
        if !languages.isEmpty {
            let cell = settings.flatMap { table in table.rows.first.map { table.cell($0, "default_language") } } ?? survey.headerCell("label")
            members.append(("languages", .array(languages.map(DefinitionJSON.string)), survey.headerCell("label")))
            if let language { members.append(("defaultLanguage", .string(language), cell)) }
        }
        guard !findings.hasErrors else { return XLSFormConversion(definition: nil, findings: findings, cells: [:]) }
        let (text, cells) = DefinitionJSON.object(members).rendered()
        var located = cells
        located[.root] = settingsCellName(workbook)
        return XLSFormConversion(definition: text, findings: findings, cells: located)
    }

    /// The form's languages and its default. The languages are those of the translated columns a person reads
    /// (`label::Français (fr)`, `hint::…`, `constraint_message::…`, the choices' and external choices' `label::…`), in column order, with
    /// `default` first for an untranslated `label` column beside translated ones (as pyxform names it); a form
    /// with fewer than two is a form in one language (no languages). The default is the settings'
    /// `default_language`, else `default`, else the first language.
    mutating func chooseLanguages(survey: SheetTable, settings: SheetTable?, choices: SheetTable?, external: SheetTable? = nil) -> (languages: [String], defaultLanguage: String?) {
        var languages: [String] = []
        for (table, base) in [(survey, "label"), (survey, "hint"), (survey, "constraint_message"), (survey, "required_message"), (choices, "label"), (external, "label")] {
            for language in table?.languages(of: base) ?? [] where !languages.contains(language) { languages.append(language) }
        }
        if !languages.isEmpty, survey.columns["label"] != nil || choices?.columns["label"] != nil { languages.insert("default", at: 0) }
        let settingsRow = settings?.rows.first
        var chosen: String?
        if let settings, let row = settingsRow, let wanted = settings.value(row, "default_language") {
            if languages.contains(wanted) || languages.isEmpty && survey.languages(of: "label") == [wanted] {
                chosen = wanted
            } else {
                let listed = languages.filter { $0 != "default" }
                error(settings.cell(row, "default_language"), "xlsform-language",
                      "The default language \"\(wanted)\" has no label::\(wanted) column in the survey sheet (its languages: \(listed.isEmpty ? "none" : listed.joined(separator: ", "))).",
                      fix: "Write the language exactly as in the label column's header, like English (en).")
            }
        } else if survey.columns["label"] == nil {
            chosen = languages.first
        }
        guard languages.count > 1 else { return ([], chosen ?? languages.first) }
        return (languages, chosen ?? languages.first)
    }

    /// The form's own members, from the settings sheet: id, version, title, presentation and labels.
    mutating func formMembers(settings: SheetTable?, pageCount: Int) -> [(key: String, value: DefinitionJSON, cell: String?)] {
        var members: [(key: String, value: DefinitionJSON, cell: String?)] = []
        let row = settings?.rows.first
        func setting(_ name: String) -> (value: String, cell: String)? {
            guard let settings, let row, let value = settings.value(row, name) else { return nil }
            return (value, settings.cell(row, name))
        }
        let settingsCell = settings.map { $0.sheet.name } ?? "settings"
        // The id: form_id, or the file's name, as FieldSheet writes ids (lower case, digits and hyphens).
        let given = setting("form_id")
        let source = given?.value ?? URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        let id = Self.formID(source)
        if id != source {
            warning(given?.cell ?? settingsCell, "xlsform-form-id", "The form id \"\(source)\" is written \"\(id)\" (FieldSheet ids are lower case letters, digits and hyphens).",
                    fix: given == nil ? "Set form_id in the settings sheet to choose the id." : "Write form_id as \"\(id)\" to silence this.")
        }
        members.append(("id", .string(id), given?.cell ?? settingsCell))
        var version = 1
        if let given = setting("version") {
            if let number = Int(given.value), number >= 1 {
                version = number
            } else if let number = Double(given.value), number >= 1, number == number.rounded(), number < 9e15 {
                version = Int(number)
            } else {
                warning(given.cell, "xlsform-version", "The version \"\(given.value)\" is not a whole number; the form is imported as version 1.",
                        fix: "Write the version as a whole number, like 2026112301.")
            }
        }
        members.append(("version", .number(Double(version)), setting("version")?.cell ?? settingsCell))
        if let title = setting("form_title") {
            members.append(("title", .string(title.value), title.cell))
        } else {
            // As pyxform does: a form without form_title is titled by its form_id (or the file's name).
            members.append(("title", .string(source), given?.cell ?? settingsCell))
            warning(given?.cell ?? settingsCell, "xlsform-title", "The form has no form_title, so its title is \"\(source)\", its \(given == nil ? "file's name" : "form_id"), as ODK's tools title it.",
                    fix: "Set form_title in the settings sheet to the task the form is for, like \"Site Visit\".")
        }
        let presentation = setting("presentation")
        members.append(("presentation", .string(presentation?.value ?? (pageCount > 1 ? "fullScreen" : "formSheet")), presentation?.cell ?? settingsCell))
        let completion = setting("completion_label")
        members.append(("completionLabel", .string(completion?.value ?? "Submit"), completion?.cell ?? settingsCell))
        for (setting, key) in [("cancel_label", "cancelLabel"), ("anchor", "anchor"), ("parent", "parent"), ("pane", "pane")] {
            if let value = self.setting(settings, row, setting) { members.append((key, .string(value.value), value.cell)) }
        }
        if let settings {
            let known: Set<String> = ["form_id", "form_title", "version", "default_language", "presentation", "completion_label", "cancel_label", "anchor", "parent", "pane", "allow_choice_duplicates"]
            for header in settings.headers where !known.contains(header.name) {
                guard let row, settings.value(row, header.name) != nil else { continue }
                warning(settings.cell(row, header.name), "xlsform-not-imported", "The setting \(header.name) is not imported.",
                        fix: "FieldSheet reads form_title, form_id, version, default_language, allow_choice_duplicates, presentation, completion_label and cancel_label.")
            }
        }
        return members
    }

    private func setting(_ settings: SheetTable?, _ row: Sheet.Row?, _ name: String) -> (value: String, cell: String)? {
        guard let settings, let row, let value = settings.value(row, name) else { return nil }
        return (value, settings.cell(row, name))
    }

    /// Findings about the form as a whole (a missing title) name the settings sheet, which describes it.
    func settingsCellName(_ workbook: Workbook) -> String {
        workbook.sheet(named: "settings")?.name ?? "settings"
    }

    /// `Site_Inspection 2` → `site-inspection-2`: lower case, other characters as hyphens, starting with a letter.
    static func formID(_ source: String) -> String {
        var id = ""
        for character in source.lowercased() {
            if character.isASCII, character.isLetter || character.isNumber { id.append(character) } else if !id.hasSuffix("-") { id.append("-") }
        }
        while id.hasSuffix("-") { id.removeLast() }
        while let first = id.first, !first.isLetter { id.removeFirst() }
        if id.isEmpty { id = "form" }
        return String(id.prefix(64))
    }
}

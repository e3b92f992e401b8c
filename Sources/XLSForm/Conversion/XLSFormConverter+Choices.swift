import FormModel

/// One choice list of the choices sheet, with the row each choice came from.
struct ChoiceList {
    var choices: [DefinitionJSON] = []
    var firstCell: String
}

extension XLSFormConverter {
    /// The lists of the choices sheet (or the external_choices sheet, which has the same columns) by list_name. Columns other than list_name, name and label become the
    /// choice's properties, which a `choice_filter` reads; a duplicate value in a list is an error unless the
    /// settings allow duplicates (`allow_choice_duplicates`, as in pyxform: a cascading select's county named
    /// like one of another state), and then the form checker needs a choiceFilter to tell them apart.
    mutating func readChoices(_ table: SheetTable?, language: String?, languages: [String] = [], allowDuplicates: Bool = false) -> [String: ChoiceList] {
        guard let table, !table.headers.isEmpty else { return [:] }
        guard table.columns["list_name"] != nil, table.columns["name"] != nil || table.columns["value"] != nil else {
            error(table.sheet.reference(row: max(table.headerRow, 1), column: 0), "xlsform-sheet",
                  "The \(table.sheet.name) sheet has no list_name and name columns in its first row.",
                  fix: "Put the column headers list_name, name and label in the \(table.sheet.name) sheet's first row.")
            return [:]
        }
        let nameColumn = table.columns["name"] != nil ? "name" : "value"
        let labelColumn = table.column("label", language: language)
        let media: Set<String> = ["image", "audio", "video", "big-image", "media::image", "media::audio", "media::video", "media::big-image"]
        var propertyColumns: [String] = []
        for header in table.headers where header.name != "list_name" && header.name != nameColumn && !header.name.hasPrefix("label") {
            if media.contains(header.name) || header.name.hasPrefix("media::") || header.name.hasPrefix("image::") || header.name.hasPrefix("audio::") {
                warning(table.headerCell(header.name), "xlsform-not-imported", "The choices' \(header.name) column is not imported (choices have no pictures or sounds in FieldSheet).",
                        fix: "Nothing to do; the choices are imported with their labels.")
            } else {
                propertyColumns.append(header.name)
            }
        }
        var lists: [String: ChoiceList] = [:]
        var seen: [String: [String: String]] = [:]
        for row in table.rows {
            guard let listName = table.value(row, "list_name") else {
                if table.value(row, nameColumn) != nil {
                    error(table.cell(row, "list_name"), "xlsform-choices", "The choice has no list_name.",
                          fix: "Write the name of the list the choice belongs to.")
                }
                continue
            }
            guard let value = table.value(row, nameColumn) else {
                error(table.cell(row, nameColumn), "xlsform-choices", "The choice of list \(listName) has no name (the value stored when it is chosen).",
                      fix: "Write the choice's name, like yes or 1.")
                continue
            }
            if let earlier = seen[listName]?[value], !allowDuplicates {
                error(table.cell(row, nameColumn), "xlsform-choices", "The list \(listName) already has a choice named \"\(value)\" (at \(earlier)).",
                      fix: "Give every choice of a list its own name, or set allow_choice_duplicates to yes in the settings sheet if a choice_filter tells them apart.")
                continue
            }
            seen[listName, default: [:]][value] = table.cell(row, nameColumn)
            var label = labelColumn.flatMap { table.value(row, $0) }
            if label == nil {
                label = table.languages(of: "label").lazy.compactMap { table.value(row, "label::\($0)") }.first
                if label == nil {
                    warning(table.cell(row, labelColumn ?? "label"), "xlsform-label", "The choice \"\(value)\" of list \(listName) has no label; its name is shown.",
                            fix: "Write the label people should read.")
                }
            }
            // In a form of several languages, the label in each the row has.
            let localized = languages.isEmpty ? [] : table.localized("label", row, languages: languages, defaultLanguage: language)
            let labelJSON: DefinitionJSON = localized.count > 1
                ? .object(localized.map { (key: $0.language, value: .string($0.value), cell: $0.cell) })
                : .string(label ?? value)
            var members: [(key: String, value: DefinitionJSON, cell: String?)] = [
                ("value", .string(value), table.cell(row, nameColumn)),
                ("label", labelJSON, table.cell(row, labelColumn ?? nameColumn)),
            ]
            let properties: [(key: String, value: DefinitionJSON, cell: String?)] = propertyColumns.compactMap { column in
                table.value(row, column).map { (column, .string($0), table.cell(row, column)) }
            }
            if !properties.isEmpty { members.append(("properties", .object(properties), nil)) }
            lists[listName, default: ChoiceList(firstCell: table.cell(row, "list_name"))].choices.append(.object(members))
        }
        return lists
    }
}

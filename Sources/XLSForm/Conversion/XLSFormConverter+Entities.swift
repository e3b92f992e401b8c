import FormModel

extension XLSFormConverter {
    /// The columns of the entities sheet, as pyxform 4.5 reads them (`dataset` is `list_name`'s older name).
    static let entityColumns: Set<String> = ["list_name", "dataset", "label", "create_if", "update_if", "entity_id"]

    /// The entities sheet's declaration: its row and the list it names, checked before the survey is built (so
    /// `save_to` can be checked against the list); nil without one, or after an error naming the cell.
    mutating func readEntities(_ table: SheetTable?) -> (table: SheetTable, row: Sheet.Row, list: String)? {
        guard let table, let row = table.rows.first else { return nil }
        var sound = true
        for header in table.headers where !Self.entityColumns.contains(header.name) {
            error(table.headerCell(header.name), "xlsform-entities", "The entities sheet's column \(header.name) is not one XLSForm's entities sheet has.",
                  fix: "Use list_name, label, create_if, update_if and entity_id; remove or rename the column.")
            sound = false
        }
        let nameColumn = table.columns["list_name"] != nil ? "list_name" : "dataset"
        for extra in table.rows.dropFirst() {
            error(table.cell(extra, nameColumn), "xlsform-entities",
                  "The entities sheet declares a second entity list (row \(extra.number)); a form saves to one entity list\(table.value(extra, nameColumn) == table.value(row, nameColumn) ? ", and this row names the same list again" : "").",
                  fix: "Keep one row in the entities sheet; save the other list's entities from a form of its own.")
            sound = false
        }
        let cell = table.cell(row, nameColumn)
        guard let list = table.value(row, nameColumn) else {
            error(cell, "xlsform-entities", "The entities sheet's row has no list_name: the entity list the form saves to.", fix: "Write the list's name, like households.")
            return nil
        }
        guard list.range(of: #"^[A-Za-z_][A-Za-z0-9_-]*$"#, options: .regularExpression) != nil, !list.hasPrefix("__"), list.count <= 64 else {
            error(cell, "xlsform-entities", "The entity list name \"\(list)\" is not a name FieldSheet takes (letters, digits, _ and -, starting with a letter or one _, no period, at most 64).",
                  fix: "Name the list like households or water_points.")
            return nil
        }
        return sound ? (table, row, list) : nil
    }

    /// The form's `entity` member from the entities sheet's row, its expressions translated as the survey's are
    /// (from the top level of the form); nil after an error naming the cell.
    mutating func entityMember(_ entities: (table: SheetTable, row: Sheet.Row, list: String)) -> (key: String, value: DefinitionJSON, cell: String?)? {
        let (table, row, list) = entities
        let nameColumn = table.columns["list_name"] != nil ? "list_name" : "dataset"
        var members: [(key: String, value: DefinitionJSON, cell: String?)] = [("list", .string(list), table.cell(row, nameColumn))]
        let before = findings.count
        for (column, key) in [("label", "label"), ("create_if", "createIf"), ("update_if", "updateIf"), ("entity_id", "entityId")] {
            guard table.value(row, column) != nil else { continue }
            if let expression = translate(table, row, column, scope: []) {
                members.append((key, .string(expression), table.cell(row, column)))
            }
        }
        guard !findings[before...].contains(where: { $0.severity == .error }) else { return nil }
        return ("entity", .object(members), table.cell(row, nameColumn))
    }
}

import FormModel

extension SurveyBuilder {
    /// The first pass: every row's type is known, every name valid and unique, every group and repeat closed.
    /// Returns false when the structure is broken (then nothing is built).
    mutating func collectNames(into converter: inout XLSFormConverter) -> Bool {
        var open: [(type: RowType, name: String, cell: String)] = []
        var structureSound = true
        for row in table.rows {
            guard let typeText = table.value(row, "type") else {
                let filled = row.cells.keys.sorted().first { column in table.headers.contains { $0.column == column } }
                if let filled, let name = table.value(row, "name") ?? table.value(row, table.column("label", language: language) ?? "label") {
                    converter.warning(table.sheet.reference(row: row.number, column: table.columns["type"] ?? filled), "xlsform-type",
                                      "The row (\(name)) has no type, so it is not imported.", fix: "Write its type, like text or select_one LIST, or delete the row.")
                }
                continue
            }
            let type = RowType(typeText)
            let typeCell = table.cell(row, "type")
            let nameCell = table.cell(row, "name")
            let name = table.value(row, "name")
            switch type {
            case .endGroup, .endRepeat:
                let wanted: RowType = type == .endGroup ? .beginGroup : .beginRepeat
                guard let last = open.last else {
                    converter.error(typeCell, "xlsform-structure", "\(typeText) closes nothing: no group or repeat is open here.",
                                    fix: "Delete the row, or add the begin_\(wanted == .beginGroup ? "group" : "repeat") it closes.")
                    structureSound = false
                    continue
                }
                guard last.type == wanted else {
                    converter.error(typeCell, "xlsform-structure",
                                    "\(typeText) closes the \(last.type == .beginGroup ? "group" : "repeat") \(last.name) opened at \(last.cell).",
                                    fix: "Close the \(last.type == .beginGroup ? "group with end_group" : "repeat with end_repeat") before this row, or fix this row's type.")
                    structureSound = false
                    continue
                }
                open.removeLast()
                continue
            case .unknown(let text):
                converter.error(typeCell, "xlsform-type", "\"\(text)\" is not a question type FieldSheet knows.",
                                fix: "Use text, integer, decimal, select_one LIST, select_multiple LIST, date, time, dateTime, geopoint, note, calculate, acknowledge, begin_group, end_group, begin_repeat or end_repeat.")
                continue
            case .refused(let what, let fix):
                converter.error(typeCell, "xlsform-type", "The type \(what) has no FieldSheet equivalent and is not imported.", fix: fix)
                recordName(name, kind: .notImported, open: open, cell: nameCell, into: &converter)
                continue
            case .metadata(let what):
                converter.warning(typeCell, "xlsform-metadata",
                                  "\(what) is not imported as a question: every record already keeps \(RowType.metadata[what] ?? "it").",
                                  fix: "Nothing to do; read it from the record's metadata.")
                recordName(name, kind: .metadata(what), open: open, cell: nameCell, into: &converter)
                continue
            case .beginGroup, .beginRepeat, .question:
                break
            }
            guard let name else {
                converter.error(nameCell, "xlsform-name", "The \(typeText) row has no name.",
                                fix: "Give it a name (letters, digits and _), unique in the form; it is the answer's key.")
                if type == .beginGroup || type == .beginRepeat { open.append((type, "?", typeCell)) }
                continue
            }
            let kind: NameKind
            switch type {
            case .beginGroup: kind = .group
            case .beginRepeat: kind = .repeatGroup
            case .question(let fieldKind, _): kind = .question(fieldKind)
            default: kind = .notImported
            }
            recordName(name, kind: kind, open: open, cell: nameCell, into: &converter)
            if type == .beginGroup || type == .beginRepeat { open.append((type, name, typeCell)) }
        }
        for unclosed in open.reversed() {
            let isGroup = unclosed.type == .beginGroup
            converter.error(unclosed.cell, "xlsform-structure",
                            "The \(isGroup ? "group" : "repeat") \(unclosed.name) is never closed: the sheet ends without its \(isGroup ? "end_group" : "end_repeat").",
                            fix: "Add an \(isGroup ? "end_group" : "end_repeat") row after its last question.")
            structureSound = false
        }
        return structureSound
    }

    /// Records a name with the repeats around it; an invalid or repeated name is an error on its cell.
    private mutating func recordName(_ name: String?, kind: NameKind, open: [(type: RowType, name: String, cell: String)], cell: String,
                                     into converter: inout XLSFormConverter) {
        guard let name else { return }
        if let first = name.first, first.isASCII, first.isLetter || first == "_", name.count <= 64,
           name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) {
            // A valid FieldSheet id.
        } else if kind != .notImported {
            converter.error(cell, "xlsform-name", "The name \"\(name)\" cannot be a FieldSheet field id (letters, digits and _, starting with a letter or _, at most 64).",
                            fix: "Rename it, like \(SurveyBuilder.suggestedName(name)), and change the ${\(name)} references to match.")
        }
        if let earlier = names[name] {
            converter.error(cell, "xlsform-name", "The name \(name) is already used at \(earlier.cell).",
                            fix: "Give every question, group and repeat its own name; answers are stored by name.")
            return
        }
        names[name] = NameInfo(kind: kind, chain: open.filter { $0.type == .beginRepeat }.map(\.name), cell: cell)
    }

    static func suggestedName(_ name: String) -> String {
        var suggestion = String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" }.prefix(64))
        if let first = suggestion.first, first.isNumber { suggestion = "_" + suggestion.prefix(63) }
        return suggestion.isEmpty ? "question" : suggestion
    }
}

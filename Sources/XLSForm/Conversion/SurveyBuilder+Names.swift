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
                    converter.warning(table.reference(row: row, column: table.columns["type"] ?? filled), "xlsform-type",
                                      "The row (\(name)) has no type, so it is not imported.", fix: "Write its type, like text or select_one LIST, or delete the row.")
                }
                continue
            }
            let type = RowType(typeText)
            let typeCell = table.cell(row, "type")
            let nameCell = table.cell(row, "name")
            let name = rowName(row, type)
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
                let message = RowType.fromFile.contains(what)
                    ? "The type \(what) reads its choices from a file attached to the form that is no entity list (only a file LIST.csv names one), so it is not imported."
                    : "The type \(what) has no FieldSheet equivalent and is not imported."
                converter.error(typeCell, "xlsform-type", message, fix: fix)
                recordName(name, kind: .notImported, open: open, cell: nameCell, row: row, into: &converter)
                continue
            case .entityListInstance:
                continue  // the lookups instance('LIST')/… name their list
            case .metadata(let what):
                converter.warning(typeCell, "xlsform-metadata",
                                  "\(what) is not imported as a question: every record already keeps \(RowType.metadata[what] ?? "it").",
                                  fix: "Nothing to do; read it from the record's metadata.")
                recordName(name, kind: .metadata(what), open: open, cell: nameCell, row: row, into: &converter)
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
            let key = recordName(name, kind: kind, open: open, cell: nameCell, row: row, into: &converter) ?? name
            if type == .beginGroup || type == .beginRepeat { open.append((type, key, typeCell)) }
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

    /// Records a name with the repeats around it and gives it its FieldSheet id (returned; nil after an error).
    /// As in XLSForm, a name must be unique within its parent group or repeat (the survey at the top), and a
    /// repeat's in the whole survey. The same name in another group keeps answers apart by its own id: the
    /// parent's id and the name (`household_age`), warned about; a `${name}` naming both is refused.
    @discardableResult
    private mutating func recordName(_ name: String?, kind: NameKind, open: [(type: RowType, name: String, cell: String)], cell: String,
                                     row: Sheet.Row, into converter: inout XLSFormConverter) -> String? {
        guard let name else { return nil }
        // A name XLSForm takes that is not a FieldSheet id (`first-name`, `site.code`) is stored as one
        // (`first_name`), warned about; ${first-name} still names it.
        var wanted = name
        let isID = name.first.map { $0.isASCII && ($0.isLetter || $0 == "_") } == true && name.count <= 64
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        if !isID, kind != .notImported {
            guard name.first.map({ $0.isASCII && ($0.isLetter || $0 == "_") }) == true,
                  name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) }) else {
                converter.error(cell, "xlsform-name", "The name \"\(name)\" cannot be a FieldSheet field id (letters, digits and _, starting with a letter or _, at most 64).",
                                fix: "Rename it, like \(SurveyBuilder.suggestedName(name)), and change the ${\(name)} references to match.")
                return nil
            }
            wanted = SurveyBuilder.suggestedName(name)
        }
        let parent = open.last
        let place = parent.map { "\($0.name)/\(name)" } ?? "/\(name)"
        if let earlier = siblings[place] {
            let within = parent.map { "the \($0.type == .beginRepeat ? "repeat" : "group") \($0.name)" } ?? "the survey"
            converter.error(cell, "xlsform-name", "The name \(name) is already used at \(earlier), in the same place (\(within)).",
                            fix: "Give every question, group and repeat its own name within its group; answers are stored by name.")
            return nil
        }
        siblings[place] = cell
        if kind == .repeatGroup {
            if let earlier = repeats[name] {
                converter.error(cell, "xlsform-name", "The name \(name) is already used by the repeat at \(earlier); a repeat's name must be unique in the whole survey.",
                                fix: "Give the repeat a name of its own; its instances are stored under it.")
                return nil
            }
            repeats[name] = cell
        }
        let chain = open.filter { $0.type == .beginRepeat }.map(\.name)
        guard var first = names[name] else {
            var key = wanted
            while usedKeys.contains(key) { key += "_" }  // a name an earlier duplicate's id took
            if key != name {
                keys[row.number] = key
                if !isID {
                    converter.warning(cell, "xlsform-name", "The name \(name) is stored as \(key) (FieldSheet ids are letters, digits and _).",
                                      fix: "Nothing to do; ${\(name)} still names it. Rename it \(key) to silence this.")
                }
            }
            usedKeys.insert(key)
            names[name] = NameInfo(kind: kind, chain: chain, cell: cell, key: key)
            return key
        }
        var key = parent.map { "\($0.name)_\(wanted)" } ?? wanted
        while usedKeys.contains(key) { key += "_" }
        guard key.count <= 64 else {
            converter.error(cell, "xlsform-name", "The name \(name) is already used at \(first.cell), and \(key), the id it would be stored as, is longer than 64 characters.",
                            fix: "Give it a name of its own.")
            return nil
        }
        usedKeys.insert(key)
        keys[row.number] = key
        first.others.append(cell)
        names[name] = first
        converter.warning(cell, "xlsform-name", "The name \(name) is also used at \(first.cell); answers to this one are stored as \(key).",
                          fix: "Nothing to do, unless an expression needs either: ${\(name)} names both, so give each a name of its own.")
        return key
    }

    /// The row's name; a note without one is named `generated_note_name_ROW` (ROW: the sheet's row number), as
    /// pyxform names it.
    func rowName(_ row: Sheet.Row, _ type: RowType) -> String? {
        if let name = table.value(row, "name") { return name }
        return type == .question(.note, list: nil) ? "generated_note_name_\(row.number)" : nil
    }

    static func suggestedName(_ name: String) -> String {
        var suggestion = String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" }.prefix(64))
        if let first = suggestion.first, first.isNumber { suggestion = "_" + suggestion.prefix(63) }
        return suggestion.isEmpty ? "question" : suggestion
    }
}

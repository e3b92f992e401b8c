/// pyxform's `begin loop over LIST` … `end loop`, read as pyxform builds it: a group holding, for each choice of
/// LIST in order, a group named by the choice with the loop's rows inside, `%(label)s` in their labels and hints
/// replaced by the choice's label (in the same language). The rows written for the choices are numbered past
/// the sheet's last row, and every cell of them is named by the row it came from (``cell(_:_:)``).
extension SheetTable {
    /// A problem with a loop, for the converter to report.
    struct LoopProblem {
        var cell: String
        var message: String
        var fix: String
    }

    /// The list a `begin loop over LIST` (or `begin_loop over LIST`) row loops over.
    static func loopList(_ type: String) -> String? {
        let words = type.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
        if words.count == 4, words[0] == "begin", words[1] == "loop", words[2] == "over" { return String(type.split(whereSeparator: \.isWhitespace)[3]) }
        if words.count == 3, words[0] == "begin_loop", words[1] == "over" { return String(type.split(whereSeparator: \.isWhitespace)[2]) }
        return nil
    }

    static func isLoopEnd(_ type: String) -> Bool {
        let words = type.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
        return words == ["end", "loop"] || words == ["end_loop"]
    }

    /// The sheet with every loop written out (loops inside loops too); a loop over a list the choices sheet does
    /// not hold, or one never closed, is left as it is and reported.
    /// `withOther`: the lists a `select_one LIST or_other` question adds the choice other ("Other") to, which
    /// a loop over them goes through too, as pyxform's does.
    mutating func expandLoops(choices: SheetTable?, withOther: Set<String> = []) -> [LoopProblem] {
        guard let typeColumn = columns["type"], rows.contains(where: { row in row.cells[typeColumn].map { Self.loopList($0.text) != nil } ?? false })
        else { return [] }
        var problems: [LoopProblem] = []
        var next = max(rows.last?.number ?? headerRow, unreadRow?.number ?? 0) + 1
        var sources = sourceRows
        func source(_ number: Int) -> Int { sources[number] ?? number }
        /// The rows of `slice` with every loop in it written out.
        func expand(_ slice: ArraySlice<Sheet.Row>) -> [Sheet.Row] {
            var out: [Sheet.Row] = []
            var index = slice.startIndex
            while index < slice.endIndex {
                let row = slice[index]
                guard let type = row.cells[typeColumn]?.text.trimmingCharacters(in: .whitespaces), let list = Self.loopList(type) else {
                    out.append(row)
                    index += 1
                    continue
                }
                // The matching end, past loops nested inside.
                var depth = 0
                var end: Int?
                for candidate in slice.indices[(index + 1)...] {
                    let text = slice[candidate].cells[typeColumn]?.text ?? ""
                    if Self.loopList(text) != nil { depth += 1 }
                    if Self.isLoopEnd(text) {
                        if depth == 0 { end = candidate; break }
                        depth -= 1
                    }
                }
                let choiceRows = choices.map { table in table.rows.filter { table.value($0, "list_name") == list } } ?? []
                guard let end, let choices, !choiceRows.isEmpty else {
                    problems.append(LoopProblem(
                        cell: sheet.reference(row: source(row.number), column: typeColumn),
                        message: end == nil ? "The loop over \(list) is never closed with end loop." : "The loop is over the list \(list), which is not in the choices sheet.",
                        fix: end == nil ? "Add an end loop row after the loop's questions." : "Add the list's choices to the choices sheet, or correct the list's name."))
                    out.append(row)
                    index += 1
                    continue
                }
                let inner = expand(slice[(index + 1)..<end])
                out.append(retyped(row, "begin_group"))
                let other: [Sheet.Row?] = withOther.contains(list) ? [nil] : []
                for choice in choiceRows.map(Optional.some) + other {
                    // The choice's group: its name, and its label in each language the survey has a label column for.
                    var cells: [Int: CellValue] = [typeColumn: .text("begin_group")]
                    let name = choice.flatMap { choices.value($0, "name") ?? choices.value($0, "value") } ?? "other"
                    if let nameColumn = columns["name"] { cells[nameColumn] = .text(name) }
                    var labels: [Int: String] = [:]
                    for header in headers where header.name == "label" || header.name.hasPrefix("label::") {
                        let label = choice.map { choice in
                            choices.value(choice, header.name) ?? choices.column("label", language: nil).flatMap { choices.value(choice, $0) } ?? ""
                        } ?? "Other"
                        labels[header.column] = label
                        cells[header.column] = .text(label)
                    }
                    let opening = Sheet.Row(number: next, cells: cells)
                    sources[next] = source(row.number)
                    next += 1
                    out.append(opening)
                    for innerRow in inner {
                        var copied = innerRow.cells
                        for header in headers where header.name.hasPrefix("label") || header.name.hasPrefix("hint") {
                            guard case .text(let text)? = copied[header.column], text.contains("%(label)s") else { continue }
                            let language = header.name.components(separatedBy: "::").dropFirst().first
                            let column = language.flatMap { columns["label::\($0)"] } ?? columns["label"] ?? header.column
                            copied[header.column] = .text(text.replacingOccurrences(of: "%(label)s", with: labels[column] ?? labels.values.first ?? ""))
                        }
                        sources[next] = source(innerRow.number)
                        out.append(Sheet.Row(number: next, cells: copied))
                        next += 1
                    }
                    sources[next] = source(slice[end].number)
                    out.append(Sheet.Row(number: next, cells: [typeColumn: .text("end_group")]))
                    next += 1
                }
                out.append(retyped(slice[end], "end_group"))
                index = end + 1
            }
            return out
        }
        func retyped(_ row: Sheet.Row, _ type: String) -> Sheet.Row {
            var cells = row.cells
            cells[typeColumn] = .text(type)
            return Sheet.Row(number: row.number, cells: cells)
        }
        let expanded = expand(rows)
        rows = ArraySlice(expanded)
        sourceRows = sources
        return problems
    }
}

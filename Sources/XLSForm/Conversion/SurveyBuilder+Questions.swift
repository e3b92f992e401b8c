import Foundation
import FormModel

extension SurveyBuilder {
    typealias Member = (key: String, value: DefinitionJSON, cell: String?)

    /// The columns read from the survey sheet (besides label, hint and constraint_message in any language).
    static let readColumns: Set<String> = [
        "type", "name", "label", "hint", "required", "required_message", "relevant", "constraint", "constraint_message", "calculation",
        "default", "choice_filter", "read_only", "repeat_count", "appearance", "parameters", "save_to", "sensitive",
    ]

    /// One warning per survey column that holds values FieldSheet does not import (required_message, media, …).
    func warnUnreadColumns(into converter: inout XLSFormConverter) {
        for header in table.headers {
            let base = header.name.components(separatedBy: "::")[0]
            guard !Self.readColumns.contains(header.name), !["label", "hint", "constraint_message", "required_message"].contains(base) || header.name.hasPrefix("media") else { continue }
            let rows = table.rows.filter { $0.cells[header.column].map { !$0.text.trimmingCharacters(in: .whitespaces).isEmpty } ?? false }.count
            guard rows > 0 else { continue }
            let reason = "FieldSheet has no such column"
            converter.warning(table.headerCell(header.name), "xlsform-not-imported",
                              "The column \(header.name) (\(rows) row\(rows == 1 ? "" : "s")) is not imported: \(reason).",
                              fix: "Nothing to do unless the column matters; the rest of each row is imported.")
        }
    }

    /// A question row as a field.
    func question(_ row: Sheet.Row, kind baseKind: FieldKind, list: String?, name: String, scope: [String],
                  conditions: [(String, String?)], into converter: inout XLSFormConverter) -> FieldNode? {
        guard !name.isEmpty else { return nil }
        let node = FieldNode()
        var kind = baseKind
        let head = RowType.head(table.value(row, "type") ?? "")
        let range = head == "range" ? rangeParameters(row, into: &converter) : nil
        if let range, [range.start, range.end, range.step].contains(where: { $0 != $0.rounded() }) { kind = .decimal }
        let appearance = table.value(row, "appearance")
        if kind == .text, appearance?.split(separator: " ").contains("multiline") == true { kind = .multilineText }
        checkAppearance(row, allowed: kind == .multilineText ? ["multiline"] : [], into: &converter)
        node.members.append(("id", .string(name), table.cell(row, "name")))
        node.members.append(("kind", .string(kind.rawValue), table.cell(row, "type")))
        let hint = text("hint", row, scope: scope, into: &converter)
        let label = text("label", row, scope: scope, into: &converter)
        if let label {
            node.members.append(("label", label.value, label.cell))
        } else if kind == .calculate {
            node.members.append(("label", .string(name), table.cell(row, "name")))
        } else if let hint {
            node.members.append(("label", hint.value, hint.cell))
        } else if let media = mediaLabel(row, scope: scope, into: &converter) {
            // Labelled only by a picture, a sound or a video, which FieldSheet does not show or play: the file's
            // name says what it is, in each language the row has one for (`media::image::Français (fr)`).
            node.members.append(("label", media.value, media.cell))
            converter.warning(media.cell, "xlsform-label", "The question \(name) is labelled only by the \(media.kind) \(media.file), which FieldSheet does not \(media.kind == "image" ? "show" : "play"); its label is the file's name.",
                              fix: "Write a label in words as well.")
        } else {
            converter.error(table.cell(row, table.column("label", language: language) ?? "label"), "xlsform-label",
                            "The question \(name) has no label.", fix: "Write what the person filling the form reads, like \"Site name\".")
            return nil
        }
        if let hint, label != nil {
            node.members.append(("hint", hint.value, hint.cell))
        } else if head == "phone_number" {
            node.members.append(("hint", .string("Enter numbers only."), table.cell(row, "type")))  // pyxform's hint
        }
        if head == "phone_number" {
            // pyxform's constraint regex(., '^\d*$'), as FieldSheet's pattern.
            node.members.append(("pattern", .string("[0-9]*"), table.cell(row, "type")))
            node.members.append(("patternMessage", .string("Enter numbers only."), table.cell(row, "type")))
        }
        if let range {
            let cell = table.cell(row, "parameters")
            node.members.append(("min", .number(Swift.min(range.start, range.end)), cell))
            node.members.append(("max", .number(Swift.max(range.start, range.end)), cell))
        }
        if kind.takesAnswer, let required = requiredMember(row, scope: scope, into: &converter) {
            node.members.append(required)
            if let message = text("required_message", row, scope: scope, into: &converter) {
                node.members.append(("requiredMessage", message.value, message.cell))
            }
        }
        if let value = table.value(row, "default"), head != "hidden" {
            if let member = defaultMember(row, value, kind: kind, scope: scope, into: &converter) { node.members.append(member) }
        }
        if let list, let entityList = RowType.entityList(fromFile: list) {
            // select_one_from_file LIST.csv: the choices are the entities of the list LIST.
            node.members.append(("choicesFrom", .object([("entityList", .string(entityList), table.cell(row, "type"))]), table.cell(row, "type")))
        } else if let list {
            // select_one_external LIST reads the external_choices sheet's list; the others the choices sheet's.
            let external = RowType.external.contains(head)
            let (lists, sheet) = external ? (externalLists, externalSheet) : (lists, choicesSheet)
            guard let choices = lists[list] else {
                converter.error(table.cell(row, "type"), "xlsform-choices",
                                "The list \(list) is not in the \(sheet) sheet\(lists.isEmpty ? " (the workbook has no \(external ? "external " : "")choice lists)" : ""); known lists: \(lists.keys.sorted().prefix(8).joined(separator: ", ")).",
                                fix: "Add the list's choices to the \(external ? "external_choices" : "choices") sheet under list_name \(list), or correct the list name (case matters).")
                return nil
            }
            node.members.append(("choices", .array(choices.choices), table.cell(row, "type")))
        }
        appendRelevant(to: node, row, scope: scope, conditions: conditions, into: &converter)
        if let calculation = converter.translate(table, row, "calculation", scope: scope) {
            node.members.append(("calculation", .string(calculation), table.cell(row, "calculation")))
        } else if head == "hidden", table.value(row, "calculation") == nil {
            // A hidden value no one types: its default (a value or an expression), or nothing.
            node.members.append(("calculation", .string(hiddenValue(row, scope: scope, into: &converter) ?? "null"), table.cell(row, "default")))
        } else if kind == .calculate, table.value(row, "calculation") == nil {
            converter.error(table.cell(row, "calculation"), "xlsform-calculation", "The calculate row \(name) has no calculation.",
                            fix: "Write the expression it computes, like ${price} * ${quantity}.")
        }
        let step = range.flatMap { range in
            // A step other than 1 between whole numbers is a constraint; a decimal range's step is not checked.
            kind == .integer && range.step != 1 ? "(. - \(Self.number(range.start))) % \(Self.number(range.step)) == 0" : nil
        }
        if let step, table.value(row, "constraint") == nil {
            node.members.append(("constraint", .string(step), table.cell(row, "parameters")))
        }
        if let own = converter.translate(table, row, "constraint", scope: scope) {
            let constraint = step.map { "(\(own)) and (\($0))" } ?? own
            node.members.append(("constraint", .string(constraint), table.cell(row, "constraint")))
            if let message = text("constraint_message", row, scope: scope, into: &converter) {
                node.members.append(("constraintMessage", message.value, message.cell))
            }
        }
        if let filter = converter.translate(table, row, "choice_filter", scope: scope, choiceFilter: true) {
            if list == nil {
                converter.warning(table.cell(row, "choice_filter"), "xlsform-not-imported", "The choice_filter of \(name) is not imported: it is not a select question.",
                                  fix: "Remove the filter.")
            } else {
                node.members.append(("choiceFilter", .string(filter), table.cell(row, "choice_filter")))
            }
        }
        if let property = saveTo(row, into: &converter) {
            node.members.append(("saveTo", .string(property), table.cell(row, "save_to")))
        }
        // FieldSheet's own column: yes seals the answer on the device to the project key (docs/sensitive-fields.md).
        if let text = table.value(row, "sensitive")?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            if let flag = Self.flag(text) {
                if flag { node.members.append(("sensitive", .bool(true), table.cell(row, "sensitive"))) }
            } else {
                converter.error(table.cell(row, "sensitive"), "xlsform-sensitive", "sensitive \"\(text)\" of \(name) is not yes or no.", fix: "Write yes to seal the answer to the project key, or leave the cell empty.")
            }
        }
        if let readOnly = table.value(row, "read_only"), Self.flag(readOnly) == true, kind.takesAnswer, table.value(row, "calculation") == nil {
            converter.warning(table.cell(row, "read_only"), "xlsform-not-imported",
                              "read_only is not imported for \(name): FieldSheet shows a field read-only only when it has a calculation.",
                              fix: "Give the question a calculation, or make it a note.")
        }
        return node
    }

    /// The media file a row without a label or hint is labelled by (`image`, `big-image`, `audio`, `video`, each
    /// also written `media::…`), as a label: the file's name in each language the row has one for.
    func mediaLabel(_ row: Sheet.Row, scope: [String], into converter: inout XLSFormConverter) -> (value: DefinitionJSON, cell: String, kind: String, file: String)? {
        for kind in ["image", "big-image", "audio", "video"] {
            for base in [kind, "media::" + kind] {
                guard let found = text(base, row, scope: scope, references: false, into: &converter) else { continue }
                return (found.value, found.cell, kind == "big-image" ? "image" : kind, translated(base, row)?.value ?? "")
            }
        }
        return nil
    }

    /// The entity property the row's `save_to` names: `property`, or `list#property` with the list the entities
    /// sheet declares (pyxform's spelling for a form with several lists); nil when empty or refused.
    func saveTo(_ row: Sheet.Row, into converter: inout XLSFormConverter) -> String? {
        guard let value = table.value(row, "save_to")?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        let parts = value.split(separator: "#", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 2 else {
            converter.error(table.cell(row, "save_to"), "xlsform-save-to", "save_to \"\(value)\" has more than one #.", fix: "Write the property (members), or the list and the property (households#members).")
            return nil
        }
        if parts.count == 2, let declared = converter.entityList, parts[0] != declared {
            converter.error(table.cell(row, "save_to"), "xlsform-save-to", "save_to \"\(value)\" names the entity list \(parts[0]), but the entities sheet declares \(declared).",
                            fix: "Write \(declared)#\(parts[1]), or just \(parts[1]).")
            return nil
        }
        return parts.last
    }

    /// Whether the row's repeat_count is an expression other than a number or one `${question}`.
    func countIsExpression(_ row: Sheet.Row) -> Bool {
        guard let count = table.value(row, "repeat_count")?.trimmingCharacters(in: .whitespaces), Double(count) == nil else { return false }
        let reference = count.hasPrefix("${") && count.hasSuffix("}") && count.dropFirst(2).dropLast().allSatisfy { $0.isLetter || $0.isNumber || "_-.".contains($0) }
        return !reference
    }

    /// A range's `parameters` (`start=0 end=100 step=5`; pyxform's defaults 1, 10 and 1); a malformed one is an
    /// error naming the cell, and the defaults are used.
    func rangeParameters(_ row: Sheet.Row, into converter: inout XLSFormConverter) -> (start: Double, end: Double, step: Double) {
        var values = ["start": 1.0, "end": 10.0, "step": 1.0]
        guard let text = table.value(row, "parameters") else { return (1, 10, 1) }
        for pair in text.split(whereSeparator: { $0.isWhitespace || $0 == ";" || $0 == "," }) {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.count == 2, values[parts[0]] != nil, let number = Double(parts[1]), number.isFinite else {
                converter.error(table.cell(row, "parameters"), "xlsform-parameters", "The range parameter \"\(pair)\" is not start=, end= or step= with a number.",
                                fix: "Write the parameters like start=0 end=100 step=5.")
                continue
            }
            values[parts[0]] = number
        }
        let step = values["step"] ?? 1
        if step <= 0 {
            converter.error(table.cell(row, "parameters"), "xlsform-parameters", "The range's step is \(Self.number(step)); it must be more than 0.",
                            fix: "Write a positive step, like step=1.")
        }
        return (values["start"] ?? 1, values["end"] ?? 10, step > 0 ? step : 1)
    }

    /// A number as an expression or a message writes it: `5`, `0.5`.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// A hidden row's value from its default: the expression, or the text as a constant.
    func hiddenValue(_ row: Sheet.Row, scope: [String], into converter: inout XLSFormConverter) -> String? {
        guard let value = table.value(row, "default") else { return nil }
        if value.contains("${") || value.contains("(") { return converter.translate(table, row, "default", scope: scope) }
        return value.contains("'") ? "\"\(value.replacingOccurrences(of: "\"", with: ""))\"" : "'\(value)'"
    }

    /// A begin_repeat row as a repeat field; its fields are added as the rows below it are read.
    func repeatField(_ row: Sheet.Row, name: String, scope: [String], conditions: [(String, String?)], countField: String?,
                     into converter: inout XLSFormConverter) -> FieldNode {
        let node = FieldNode()
        node.children = []
        node.members.append(("id", .string(name), table.cell(row, "name")))
        node.members.append(("kind", .string("repeat"), table.cell(row, "type")))
        let label = text("label", row, scope: scope, references: false, into: &converter)
        node.members.append(("label", label?.value ?? .string(name), label?.cell ?? table.cell(row, "name")))
        appendRelevant(to: node, row, scope: scope, conditions: conditions, into: &converter)
        checkAppearance(row, allowed: ["field-list"], into: &converter)
        if let countField {
            node.members.append(("countFrom", .string(countField), table.cell(row, "repeat_count")))
        } else if let count = table.value(row, "repeat_count") {
            let cell = table.cell(row, "repeat_count")
            if let number = Double(count), number >= 1, number == number.rounded(), number <= 10_000 {
                node.members.append(("minCount", .number(number), cell))
                node.members.append(("maxCount", .number(number), cell))
            } else if count.hasPrefix("${"), count.hasSuffix("}"), let translated = converter.translate(table, row, "repeat_count", scope: scope),
                      !translated.contains(".") {
                node.members.append(("countFrom", .string(translated), cell))
            } else if converter.findings.last?.cell != cell {
                converter.error(cell, "xlsform-repeat-count", "The repeat_count \"\(count)\" is neither a whole number from 1 to 10,000, one ${question} outside the repeat, nor an expression.",
                                fix: "Write the number of instances, or the question or expression that counts them.")
            }
        }
        return node
    }

    /// `relevant`: the row's own condition and the conditions of the groups around it, all of which must hold.
    private func appendRelevant(to node: FieldNode, _ row: Sheet.Row, scope: [String], conditions: [(String, String?)], into converter: inout XLSFormConverter) {
        var all = conditions
        if let own = converter.translate(table, row, "relevant", scope: scope) { all.append((own, table.cell(row, "relevant"))) }
        guard let last = all.last else { return }
        let text = all.count == 1 ? last.0 : all.map { "(\($0.0))" }.joined(separator: " and ")
        node.members.append(("relevant", .string(text), last.1))
    }

    /// `required`: yes/no, true/false, true()/false(), 1/0; any other text is a condition, required while it holds.
    private func requiredMember(_ row: Sheet.Row, scope: [String], into converter: inout XLSFormConverter) -> Member? {
        let cell = table.cell(row, "required")
        if case .bool(let value)? = table.cellValue(row, "required") { return value ? ("required", .bool(true), cell) : nil }
        guard let text = table.value(row, "required") else { return nil }
        if let flag = Self.flag(text) { return flag ? ("required", .bool(true), cell) : nil }
        guard let condition = converter.translate(table, row, "required", scope: scope) else { return nil }
        return ("required", .object([("expression", .string(condition), cell)]), cell)
    }

    static func flag(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true", "true()", "1", "y": return true
        case "no", "false", "false()", "0", "n": return false
        default: return nil
        }
    }

    /// Warns about appearances that mean nothing in FieldSheet.
    func checkAppearance(_ row: Sheet.Row, allowed: Set<String>, into converter: inout XLSFormConverter) {
        guard let appearance = table.value(row, "appearance") else { return }
        let unknown = appearance.split(whereSeparator: \.isWhitespace).map(String.init).filter { !allowed.contains($0) }
        guard !unknown.isEmpty else { return }
        converter.warning(table.cell(row, "appearance"), "xlsform-appearance",
                          "The appearance \(unknown.joined(separator: " ")) has no meaning in FieldSheet and is not imported.",
                          fix: "Nothing to do; FieldSheet reads multiline on text questions and field-list on groups.")
    }

    /// `default`: a value in the field's plain JSON form, or an expression when it refers to questions or calls a function.
    private func defaultMember(_ row: Sheet.Row, _ value: String, kind: FieldKind, scope: [String], into converter: inout XLSFormConverter) -> Member? {
        let cell = table.cell(row, "default")
        if value.contains("${") || value.contains("(") {
            guard let expression = converter.translate(table, row, "default", scope: scope) else { return nil }
            return ("default", .object([("expression", .string(expression), cell)]), cell)
        }
        func refuse(_ expected: String) -> Member? {
            converter.error(cell, "xlsform-default", "The default \"\(value)\" is not \(expected).", fix: "Write a default the question accepts, or leave the cell empty.")
            return nil
        }
        switch kind {
        case .integer:
            guard let number = Double(value), number == number.rounded() else { return refuse("a whole number") }
            return ("default", .number(number), cell)
        case .decimal:
            guard let number = Double(value) else { return refuse("a number") }
            return ("default", .number(number), cell)
        case .boolean:
            guard let flag = Self.flag(value) ?? (value.lowercased() == "ok" ? true : nil) else { return refuse("yes or no") }
            return ("default", .bool(flag), cell)
        case .multipleChoice, .rank:
            return ("default", .array(value.split(whereSeparator: \.isWhitespace).map { .string(String($0)) }), cell)
        case .date:
            if case .number(let serial)? = table.cellValue(row, "default") { return ("default", .string(Self.date(fromSerial: serial)), cell) }
            return ("default", .string(value), cell)
        case .time:
            // A time a spreadsheet stores as a fraction of a day (9:30 is 0.395833…).
            if case .number(let fraction)? = table.cellValue(row, "default"), fraction >= 0, fraction < 1 {
                let minutes = Int((fraction * 24 * 60).rounded())
                return ("default", .string(String(format: "%02d:%02d", minutes / 60 % 24, minutes % 60)), cell)
            }
            return ("default", .string(value), cell)
        case .note, .calculate, .repeat:
            converter.warning(cell, "xlsform-not-imported", "A \(kind.rawValue) row takes no default; the default is not imported.", fix: "Remove the default.")
            return nil
        default:
            return ("default", .string(value), cell)
        }
    }

    /// A spreadsheet's day number (days since 1899-12-30) as `YYYY-MM-DD`.
    static func date(fromSerial serial: Double) -> String {
        let date = Date(timeIntervalSince1970: (serial.rounded(.down) - 25_569) * 86_400)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    }
}

import FormModel

extension XLSFormConverter {
    /// The expression in `column` of `row` translated to FieldSheet's language, or nil when the cell is empty or
    /// cannot be translated (then an error names the cell and the character within the expression).
    mutating func translate(_ table: SheetTable, _ row: Sheet.Row, _ column: String, scope: [String], choiceFilter: Bool = false) -> String? {
        guard let source = table.value(row, column) else { return nil }
        let cell = table.cell(row, column)
        let translator = XPathTranslator(resolve: resolver(scope: scope), isChoiceFilter: choiceFilter)
        let translated: String
        do {
            translated = try translator.translate(source)
        } catch {
            self.error(cell, "xlsform-expression", "\(column) cannot be translated: \(error.message) (character \(error.column) of \"\(Self.excerpt(source))\").",
                       fix: error.fix)
            return nil
        }
        // What the translation produces is parsed again when the definition is loaded; a failure there (an
        // expression past FieldSheet's nesting limit) is a finding naming this cell too.
        return translated
    }

    static func excerpt(_ text: String) -> String {
        text.count <= 120 ? text : String(text.prefix(117)) + "…"
    }

    /// How `${name}` is written from inside the repeats `scope`: `name`, or `repeat.name` when the question is in
    /// a repeat the expression is not in.
    func resolver(scope: [String]) -> (String) -> XPathTranslator.Resolution {
        let names = surveyNames
        return { name in
            guard let info = names[name] else {
                return .refused(message: "${\(name)} names no question of this form", fix: "Use a name from the survey sheet's name column (names are case-sensitive).")
            }
            switch info.kind {
            case .group:
                return .refused(message: "${\(name)} is a group, and groups have no value", fix: "Refer to a question inside the group.")
            case .metadata(let type):
                return .refused(message: "${\(name)} is \(type) metadata, which is not imported as a question",
                                fix: type == "today" ? "Use today() instead." : "Remove the reference; the record keeps this itself.")
            case .notImported:
                return .refused(message: "${\(name)} is a question that is not imported (see its own finding)", fix: "Remove the reference, or change that question's type.")
            case .question, .repeatGroup:
                var common = 0
                while common < scope.count, common < info.chain.count, scope[common] == info.chain[common] { common += 1 }
                return .path((info.chain[common...] + [name]).joined(separator: "."))
            }
        }
    }
}

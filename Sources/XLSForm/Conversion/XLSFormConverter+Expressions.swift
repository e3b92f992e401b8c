import FormModel

extension XLSFormConverter {
    /// The expression in `column` of `row` translated to FieldSheet's language, or nil when the cell is empty or
    /// cannot be translated (then an error names the cell and the character within the expression).
    mutating func translate(_ table: SheetTable, _ row: Sheet.Row, _ column: String, scope: [String], choiceFilter: Bool = false) -> String? {
        guard let source = table.value(row, column) else { return nil }
        let cell = table.cell(row, column)
        let resolve = resolver(scope: scope)
        let translator = XPathTranslator(resolve: resolve, isChoiceFilter: choiceFilter, defaultLanguage: defaultLanguage, choiceLists: choiceListNames)
        for name in FormText(source).references.map({ $0.joined(separator: ".") }) {
            if case .empty(let message, let rule) = resolve(name) {
                warning(cell, rule, "\(column) reads ${\(name)}: \(message).", fix: "Remove the reference if the value matters; nothing to do otherwise.")
            }
        }
        let translated: String
        do {
            translated = try translator.translate(source)
        } catch {
            // Quotes a spreadsheet's autocorrect curled (‘yes’, “yes”): pyxform straightens them in every cell; an
            // expression that does not read as written is read with them straightened, and the cell named.
            var failure = error
            var shown = source
            let straightened = Self.straightenedQuotes(source)
            if straightened != source {
                do {
                    let retried = try translator.translate(straightened)
                    warning(cell, "xlsform-curly-quotes", "\(column) has curly quotes (‘ ’ “ ”), which a spreadsheet's autocorrect types; they are read as straight quotes: \"\(Self.excerpt(straightened))\".",
                            fix: "Write the quotes as ' or \" in the cell (turn off smart quotes in the spreadsheet's autocorrect) to silence this.")
                    return retried
                } catch {
                    failure = error
                    shown = straightened
                }
            }
            self.error(cell, "xlsform-expression", "\(column) cannot be translated: \(failure.message) (character \(failure.column) of \"\(Self.excerpt(shown))\"\(shown == source ? "" : ", its curly quotes read as straight ones")).",
                       fix: failure.fix)
            return nil
        }
        // What the translation produces is parsed again when the definition is loaded; a failure there (an
        // expression past FieldSheet's nesting limit) is a finding naming this cell too.
        return translated
    }

    /// A label, hint or message with its `${name}` references written as FieldSheet reads them from where the
    /// row stands (`${defects.cost}` outside the repeat); a reference to no question, to a group or to metadata
    /// is an error naming the cell.
    mutating func translateText(_ text: String, cell: String, column: String, scope: [String]) -> String {
        guard FormText.mayReference(text) else { return text }
        let resolve = resolver(scope: scope)
        var result = ""
        var rest = Substring(text)
        while let start = rest.firstRange(of: "${"), let end = rest[start.upperBound...].firstIndex(of: "}") {
            result += rest[..<start.lowerBound]
            let name = String(rest[start.upperBound..<end])
            rest = rest[rest.index(after: end)...]
            switch resolve(name) {
            case .path(let path): result += "${\(path)}"
            case .empty(let message, let rule):
                warning(cell, rule, "\(column) shows ${\(name)}: \(message).", fix: "Remove the reference if the value matters; nothing to do otherwise.")
            case .refused(let message, let fix):
                self.error(cell, "xlsform-expression", "\(column) cannot show ${\(name)}: \(message).", fix: fix)
                result += "${\(name)}"
            }
        }
        return result + rest
    }

    /// `text` with the typographic quotes ‘ ’ “ ” as ' and ", as pyxform's clean_text_values writes them.
    static func straightenedQuotes(_ text: String) -> String {
        String(text.map { character -> Character in
            switch character {
            case "\u{2018}", "\u{2019}": "'"
            case "\u{201C}", "\u{201D}": "\""
            default: character
            }
        })
    }

    /// XLSForm's metadata a FieldSheet record keeps, by what `record.<name>` reads it as.
    static let recordMetadata: [String: String] = [
        "start": "start", "end": "end", "today": "today", "deviceid": "device", "uri:deviceid": "device", "imei": "device",
        "username": "user", "uri:username": "user",
    ]
    /// XLSForm's metadata FieldSheet does not read (ODK Collect on current Android leaves most of them empty too).
    static let unknownMetadata: Set<String> = [
        "phonenumber", "uri:phonenumber", "simserial", "uri:simserial", "subscriberid", "uri:subscriberid", "email", "uri:email",
    ]

    static func excerpt(_ text: String) -> String {
        text.count <= 120 ? text : String(text.prefix(117)) + "…"
    }

    /// How `${name}` is written from inside the repeats `scope`: `name`, or `repeat.name` when the question is in
    /// a repeat the expression is not in.
    func resolver(scope: [String]) -> (String) -> XPathTranslator.Resolution {
        let names = surveyNames
        // A question of the form's own named record is read instead of the record's metadata.
        let ownsRecordName = names.values.contains { info in
            switch info.kind {
            case .question, .repeatGroup: info.key == RecordMetadata.prefix
            default: false
            }
        }
        return { name in
            guard let info = names[name] else {
                return .refused(message: "${\(name)} names no question of this form", fix: "Use a name from the survey sheet's name column (names are case-sensitive).")
            }
            if !info.others.isEmpty {
                return .refused(message: "${\(name)} names \(info.others.count + 1) elements (\(([info.cell] + info.others).joined(separator: ", "))), in different groups",
                                fix: "Give the one the expression means a name of its own and refer to that.")
            }
            switch info.kind {
            case .group:
                return .refused(message: "${\(name)} is a group, and groups have no value", fix: "Refer to a question inside the group.")
            case .metadata(let type):
                if let metadata = Self.recordMetadata[type] {
                    guard !ownsRecordName else {
                        return .refused(message: "${\(name)} is \(type) metadata, read as record.\(metadata), but the form has a question named record",
                                        fix: "Rename the question named record.")
                    }
                    return .path("\(RecordMetadata.prefix).\(metadata)")
                }
                if Self.unknownMetadata.contains(type) {
                    return .empty(message: "FieldSheet does not read the device's \(type), so it reads as nothing")
                }
                return .refused(message: "${\(name)} is \(type) metadata, which is not imported as a question",
                                fix: type == "today" ? "Use today() instead." : "Remove the reference; the record keeps this itself.")
            case .notImported:
                return .refused(message: "${\(name)} is a question that is not imported (see its own finding)", fix: "Remove the reference, or change that question's type.")
            case .question(.note):
                // A note holds no answer: ODK reads it as empty text, FieldSheet as nothing.
                return .empty(message: "\(name) is a note, which holds no answer, so it reads as nothing (as ODK reads it, empty)", rule: "xlsform-note-value")
            case .question, .repeatGroup:
                var common = 0
                while common < scope.count, common < info.chain.count, scope[common] == info.chain[common] { common += 1 }
                return .path((info.chain[common...] + [info.key]).joined(separator: "."))
            }
        }
    }
}

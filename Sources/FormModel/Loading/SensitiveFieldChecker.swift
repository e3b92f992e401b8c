/// The loader's checks of `sensitive` fields: a sensitive answer is sealed on the device to the project key,
/// so nothing but the device that typed it can read it. It must therefore be a typed answer (not computed,
/// not a note or a repeat, not a file whose bytes travel apart), saved to no entity, and read by no other
/// field's expression or text: the server and the other devices would read it as unanswered.
enum SensitiveFieldChecker {
    static func check(_ form: FormDefinition, fieldPaths: [String: JSONPath], _ error: (String, JSONPath, String, String) -> Void) {
        let fields = FormFields(form: form)
        let sensitive = Set(fields.order.filter { fields.byID[$0]?.sensitive == true })
        guard !sensitive.isEmpty else { return }
        for id in fields.order.filter(sensitive.contains) {
            guard let field = fields.byID[id], let path = fieldPaths[id]?.appending("sensitive") else { continue }
            if !field.isEditable {
                error("sensitive-not-an-answer", path, "The field \"\(id)\" is a \(field.isComputed ? "computed field" : field.kind.rawValue), which holds no answer a person types; only typed answers are sealed.",
                      "Remove \"sensitive\" from \"\(id)\" and mark the fields it is computed from or holds instead.")
            } else if field.kind.takesAttachment {
                error("sensitive-attachment", path, "The field \"\(id)\" is a \(field.kind.rawValue) field: its file's bytes travel and are stored apart from the answer and would not be sealed.",
                      "Remove \"sensitive\" from \"\(id)\"; sealing files is not supported yet.")
            } else if field.saveTo != nil {
                error("sensitive-saved-to-entity", path, "The field \"\(id)\" saves its answer to the entity property \"\(field.saveTo ?? "")\", which the server writes in plain text.",
                      "Remove \"saveTo\" or \"sensitive\" from \"\(id)\".")
            }
        }
        // Every name read by another field's expressions and texts, by the entity declaration and page titles.
        func reported(_ names: [[String]], by reader: String, at path: JSONPath) {
            for name in Set(names.flatMap { $0 }).sorted() where sensitive.contains(name) && name != reader {
                error("sensitive-read", path, "\(reader.isEmpty ? "This expression" : "The field \"\(reader)\"") reads the sensitive field \"\(name)\", whose answer the server and other devices cannot read (it is sealed to the project key).",
                      "Read a field that is not sensitive, or remove \"sensitive\" from \"\(name)\".")
            }
        }
        func parsed(_ source: String) -> [[String]] {
            guard let expression = try? FormExpression.parse(source) else { return [] }
            var names = expression.referencedNames
            expression.visit { node in
                // choice-label(value, 'field') names its field in a string.
                if case .call(.choiceLabel, let arguments) = node, arguments.count == 2, case .literal(.string(let id)) = arguments[1] { names.append([id]) }
            }
            return names
        }
        for id in fields.order {
            guard let field = fields.byID[id], let fieldPath = fieldPaths[id] else { continue }
            for property in ExpressionChecker.properties {
                // A field's own constraint reads its answer on the device that typed it, where it is in clear.
                guard let source = field[keyPath: property.source], property.key != "constraint" || !sensitive.contains(id) else { continue }
                reported(parsed(source), by: id, at: fieldPath.appending(property.key))
            }
            for (path, source) in ExpressionChecker.texts(of: field, at: fieldPath) where FormText.mayReference(source) {
                reported(FormText(source).references, by: id, at: path)
            }
            if let source = field.countFrom { reported([[source]], by: id, at: fieldPath.appending("countFrom")) }
        }
        for (index, page) in form.pages.enumerated() {
            for source in page.title?.allTexts ?? [] where FormText.mayReference(source) {
                reported(FormText(source).references, by: "", at: .root.appending("pages").appending(index).appending("title"))
            }
        }
        for (key, source) in form.entity?.expressions ?? [] {
            reported(parsed(source), by: "", at: .root.appending("entity").appending(key))
        }
    }
}

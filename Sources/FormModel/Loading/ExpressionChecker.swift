/// The loader's checks of a form's expressions: each parses, names fields that exist and can be read from where
/// it stands (inside a repeat, a field of the same instance; outside, a repeat's fields only through `sum()`,
/// `count()` and the like), has no type mismatch the types show, and no calculation or condition depends on itself.
struct ExpressionChecker {
    let loaded: LoadedForm
    let fieldPaths: [String: JSONPath]
    let fields: FormFields

    init(loaded: LoadedForm, fieldPaths: [String: JSONPath]) {
        self.loaded = loaded
        self.fieldPaths = fieldPaths
        self.fields = FormFields(form: loaded.form)
    }

    /// One expression property: its JSON key, the word findings use and the prefix of its rule ids.
    struct Property {
        var key: String
        var noun: String
        var rule: String
        var source: KeyPath<FieldDefinition, String?>
    }

    nonisolated(unsafe) static let properties: [Property] = [
        Property(key: "relevant", noun: "condition", rule: "relevance", source: \.relevant),
        Property(key: "calculation", noun: "calculation", rule: "calculation", source: \.calculation),
        Property(key: "constraint", noun: "constraint", rule: "constraint", source: \.constraint),
        Property(key: "choiceFilter", noun: "choice filter", rule: "choice-filter", source: \.choiceFilter),
        Property(key: "default", noun: "default", rule: "default", source: \.defaultExpression),
        Property(key: "required", noun: "required condition", rule: "required", source: \.requiredExpression),
    ]

    func check() -> [Finding] {
        var findings: [Finding] = []
        func error(_ rule: String, _ path: JSONPath, _ message: String, fix: String) {
            findings.append(Finding(.error, rule: rule, file: loaded.file, path: path, location: loaded.location(of: path), message: message, fix: fix))
        }
        for id in fields.order {
            guard let field = fields.byID[id], let fieldPath = fieldPaths[id] else { continue }
            for property in Self.properties {
                guard let source = field[keyPath: property.source] else { continue }
                let path = ["default", "required"].contains(property.key) ? fieldPath.appending(property.key).appending("expression") : fieldPath.appending(property.key)
                let shown = FormChecker.shown(source)
                let expression: FormExpression
                do {
                    expression = try FormExpression.parse(source)
                } catch {
                    findings.append(Finding(.error, rule: "\(property.rule)-syntax", file: loaded.file, path: path, location: loaded.location(of: path),
                                            message: "The \(property.noun) \"\(shown)\" does not parse: \(error.message) at column \(error.column) of the \(property.noun).",
                                            fix: "Write a \(property.noun) like priority == 'high', count > 3 and needs_parts, or sum(defects.cost)."))
                    continue
                }
                var namesKnown = true
                var usesCurrent = false
                expression.visit { if case .current = $0 { usesCurrent = true } }
                if usesCurrent, property.key != "constraint" {
                    error("\(property.rule)-current-value", path, "The \(property.noun) \"\(shown)\" uses '.', the field's own answer, which only a constraint reads.", fix: "Name the field instead of '.'.")
                }
                // choice-label(value, 'field') names a choice field by its id, in a string.
                expression.visit { node in
                    guard case .call(.choiceLabel, let arguments) = node, arguments.count == 2 else { return }
                    guard case .literal(.string(let id)) = arguments[1], fields.byID[id]?.choices != nil else {
                        namesKnown = false
                        error("\(property.rule)-unknown-field", path, "The \(property.noun) \"\(shown)\" calls choice-label() without the id of a choice field, in quotes, as its second argument.",
                              fix: "Write choice-label(fruit, 'fruit') with the id of a singleChoice or multipleChoice field.")
                        return
                    }
                }
                // indexed-repeat(group.field, n) names a repeat and a field directly inside it.
                expression.visit { node in
                    guard case .call(.indexedRepeat, let arguments) = node, arguments.count == 2 else { return }
                    guard case .name(let name) = arguments[0], name.count == 2, fields.byID[name[0]]?.kind == .repeat else {
                        namesKnown = false
                        error("\(property.rule)-unknown-field", path, "The \(property.noun) \"\(shown)\" calls indexed-repeat() without a repeat's field, written repeat.field, as its first argument.",
                              fix: "Write indexed-repeat(defects.cost, 2) with the id of a repeat and of a field directly inside it.")
                        return
                    }
                }
                if !["calculation", "default"].contains(property.key), expression.calls(.once) || expression.calls(.uuid) {
                    error("\(property.rule)-kept-function", path, "The \(property.noun) \"\(shown)\" calls once() or uuid(), whose value is kept the first time it is computed; only a calculation or a default keeps a value.",
                          fix: "Compute the value in a calculate field (\"calculation\": \"once(uuid())\") and read that field.")
                }
                var usesPosition = false
                expression.visit { if case .call(.position, _) = $0 { usesPosition = true } }
                if usesPosition, fields.repeatChain(id).isEmpty {
                    error("\(property.rule)-position-outside-repeat", path, "The \(property.noun) \"\(shown)\" uses position(), the number of the repeat instance it is in, but \"\(id)\" is in no repeat.",
                          fix: "Use position() only in the fields of a repeat.")
                }
                for name in expression.referencedNames {
                    if let problem = scopeProblem(name, from: field, property: property) {
                        namesKnown = false
                        error(problem.rule, path, "The \(property.noun) \"\(shown)\" \(problem.message)", fix: problem.fix)
                    }
                }
                guard namesKnown else { continue }
                let (type, mismatches) = expression.inferType { nameType($0, from: field) }
                for mismatch in mismatches {
                    error("expression-type-mismatch", path, "The \(property.noun) \"\(shown)\" \(mismatch).", fix: "Use fields of the right kind, or compare with a value of the same type.")
                }
                if property.key == "calculation" || property.key == "default", !type.fits(field.kind) {
                    error("expression-type-mismatch", path, "The \(property.noun) \"\(shown)\" gives \(type), but \"\(id)\" is a \(field.kind.rawValue) field.", fix: "Change the field's kind to fit the value, or the expression to give \(FieldValidator.expectation(field.kind)).")
                }
            }
            // `${name}` in what a person reads: each name known and readable from the field, as in an expression.
            for (path, source) in Self.texts(of: field, at: fieldPath) where FormText.mayReference(source) {
                for name in FormText(source).references {
                    if let problem = scopeProblem(name, from: field, property: Self.textProperty) {
                        error(problem.rule, path, "The text \"\(FormChecker.shown(source))\" \(problem.message)", fix: problem.fix)
                    }
                }
            }
            if let source = field.countFrom, field.kind == .repeat {
                let target = fields.byID[source]
                if target == nil || ![.integer, .calculate].contains(target?.kind) || !fields.repeatChain(id).starts(with: fields.repeatChain(source)) {
                    error("count-from-invalid", fieldPath.appending("countFrom"), "\"countFrom\" names \"\(source)\", which is not an integer or calculate field outside the repeat \"\(id)\".", fix: "Name an integer field that comes before the repeat, like number_of_members, or a calculate field that counts the instances.")
                }
            }
        }
        // `${name}` in a page's title, read from the top level of the form (as the page's own fields read names).
        for (index, page) in loaded.form.pages.enumerated() {
            guard let title = page.title, let first = page.fields.first else { continue }
            let path = JSONPath.root.appending("pages").appending(index).appending("title")
            for source in title.allTexts where FormText.mayReference(source) {
                for name in FormText(source).references {
                    if let problem = scopeProblem(name, from: first, property: Self.textProperty) {
                        error(problem.rule, path, "The text \"\(FormChecker.shown(source))\" \(problem.message)", fix: problem.fix)
                    }
                }
            }
        }
        // The entity declaration's expressions, read from the top level of the form.
        if let entity = loaded.form.entity, let top = loaded.form.pages.first?.fields.first {
            for (key, source) in entity.expressions {
                let path = JSONPath.root.appending("entity").appending(key)
                let property = Property(key: "entity", noun: "entity \(key)", rule: "entity", source: \.relevant)
                let expression: FormExpression
                do {
                    expression = try FormExpression.parse(source)
                } catch let failure {
                    error("entity-syntax", path, "The entity \(key) \"\(FormChecker.shown(source))\" does not parse: \(failure.message) at column \(failure.column).",
                          fix: "Write an expression over the form's answers, like concat(head_name, ' ', village).")
                    continue
                }
                for name in expression.referencedNames {
                    if let problem = scopeProblem(name, from: top, property: property) {
                        error(problem.rule, path, "The entity \(key) \"\(FormChecker.shown(source))\" \(problem.message)", fix: problem.fix)
                    }
                }
            }
        }
        let logic = FormLogic(form: loaded.form)
        if let cycle = RelevanceGraph(edges: logic.reads, fieldOrder: fields.order).firstCycle(), let first = cycle.first, let path = fieldPaths[first] {
            let calculated = cycle.contains { logic.calculation[$0] != nil }
            let key = calculated && logic.calculation[first] != nil ? "calculation" : logic.relevant[first] != nil ? "relevant" : "fields"
            error(calculated ? "calculation-cycle" : "relevance-cycle", path.appending(key),
                  "The \(calculated ? "calculations and conditions" : "relevance conditions") form a cycle: \(cycle.joined(separator: " → ")).",
                  fix: "A field's condition or calculation may only read fields whose own conditions and calculations do not depend on it.")
        }
        return findings
    }

    /// The texts a person reads that may hold `${name}` references.
    nonisolated(unsafe) static let textProperty = Property(key: "text", noun: "text", rule: "text", source: \.relevant)

    /// A field's texts that show answers, in every language, with their paths: label, hint, messages, the
    /// instance name, the choices' labels.
    static func texts(of field: FieldDefinition, at path: JSONPath) -> [(JSONPath, String)] {
        localizedTexts(of: field, at: path).flatMap { path, text in text.allTexts.map { (path, $0) } }
    }

    /// A field's texts a person reads, with their paths (not those of the fields a repeat holds).
    static func localizedTexts(of field: FieldDefinition, at path: JSONPath) -> [(JSONPath, LocalizedText)] {
        var texts: [(JSONPath, LocalizedText)] = [(path.appending("label"), field.label)]
        let optional: [(String, LocalizedText?)] = [
            ("hint", field.hint), ("requiredMessage", field.requiredMessage), ("constraintMessage", field.constraintMessage), ("patternMessage", field.patternMessage), ("instanceLabel", field.instanceLabel),
        ]
        for (key, text) in optional {
            if let text { texts.append((path.appending(key), text)) }
        }
        for (index, choice) in (field.choices ?? []).enumerated() {
            texts.append((path.appending("choices").appending(index).appending("label"), choice.label))
        }
        return texts
    }

    struct ScopeProblem {
        var rule: String
        var message: String
        var fix: String
    }

    /// Why `name` cannot be read from `field`'s place, if it cannot.
    func scopeProblem(_ name: [String], from field: FieldDefinition, property: Property) -> ScopeProblem? {
        if name.count == 2, name[0] == "choice", property.key == "choiceFilter" {
            // An entity list's properties are the list's, not the form's: any may be read.
            if field.choicesFrom != nil { return nil }
            let properties = Set((field.choices ?? []).flatMap { ($0.properties ?? [:]).keys } + ["value", "label"])
            guard properties.contains(name[1]) else {
                // `pastel == yes` where yes is a value of the choices' property pastel: the text, unquoted.
                let holder = (field.choices ?? []).lazy.compactMap { $0.properties?.first { $0.value == name[1] }?.key }.first
                let quote = holder.map { " If \"\(name[1])\" is the text the choices' \($0) holds, write it in quotes: '\(name[1])'." } ?? ""
                return ScopeProblem(rule: "choice-filter-unknown-property", message: "reads choice.\(name[1]), but no choice of \"\(field.id)\" has the property \"\(name[1])\".",
                                    fix: "Add \"properties\": {\"\(name[1])\": …} to the choices, or read one of: \(properties.sorted().joined(separator: ", ")).\(quote)")
            }
            return nil
        }
        if name.count == 2, name[0] == RecordMetadata.prefix, fields.byID[name[0]] == nil {
            guard RecordMetadata.names[name[1]] != nil else {
                return ScopeProblem(rule: "\(property.rule)-unknown-field", message: "names \"\(name.joined(separator: "."))\", which is not something a record keeps.",
                                    fix: "Read one of: \(RecordMetadata.names.keys.sorted().map { "record." + $0 }.joined(separator: ", ")).")
            }
            return nil
        }
        guard let first = fields.byID[name[0]] else {
            return ScopeProblem(rule: "\(property.rule)-unknown-field", message: "names \"\(name[0])\", which is not a field of this form.",
                                fix: "Use the id of a field of this form; known ids: \(fields.order.prefix(50).joined(separator: ", "))\(fields.order.count > 50 ? ", …" : "").")
        }
        if first.kind == .note {
            return ScopeProblem(rule: "\(property.rule)-note-field", message: "reads \"\(name[0])\", a note, which never has an answer.", fix: "Refer to a field that takes an answer.")
        }
        let readerChain = fields.repeatChain(field.id)
        guard readerChain.starts(with: fields.repeatChain(first.id)) else {
            let group = fields.repeatChain(first.id).last ?? ""
            return ScopeProblem(rule: "repeat-scope", message: "reads \"\(name[0])\", a field of each \"\(group)\" instance, from outside that repeat.",
                                fix: "Read it through the repeat, like sum(\(group).\(name[0])) or count(\(group)).")
        }
        var parent = first
        for child in name.dropFirst() {
            guard parent.kind == .repeat, let next = fields.byID[child], fields.container[child] == parent.id else {
                return ScopeProblem(rule: "\(property.rule)-unknown-field", message: "names \"\(name.joined(separator: "."))\", but \"\(child)\" is not a field of the repeat \"\(parent.id)\".",
                                    fix: "Write repeat.field with a field directly inside the repeat.")
            }
            parent = next
        }
        return nil
    }

    /// The type `name` has when read from `field`.
    func nameType(_ name: [String], from field: FieldDefinition) -> ExpressionType? {
        if name == ["."] { return ExpressionType(kind: field.kind) }
        if name.count == 2, name[0] == "choice" { return .text }
        if name.count == 2, name[0] == RecordMetadata.prefix, fields.byID[name[0]] == nil { return RecordMetadata.names[name[1]] }
        guard let last = fields.byID[name[name.count - 1]] else { return nil }
        let readerChain = fields.repeatChain(field.id)
        let crossesRepeat = name.dropLast().contains { !readerChain.contains($0) }
        let type = last.kind == .calculate ? ExpressionType.any : ExpressionType(kind: last.kind)
        if crossesRepeat, last.kind != .repeat {
            if case .list(let item) = type { return .list(item) }
            return .list(type.asItem)
        }
        return type
    }
}

/// The rules of a sound form that a JSON Schema cannot express.
enum FormChecker {
    static func check(_ loaded: LoadedForm) -> [Finding] {
        var findings: [Finding] = []
        let form = loaded.form
        func error(_ rule: String, _ path: JSONPath, _ message: String, fix: String) {
            findings.append(Finding(.error, rule: rule, file: loaded.file, path: path, location: loaded.location(of: path), message: message, fix: fix))
        }

        if let language = form.defaultLanguage, !form.languages.contains(language) {
            error("language-unknown", .root.appending("defaultLanguage"), "The default language \"\(language)\" is not one of the form's languages (\(form.languages.isEmpty ? "it lists none" : form.languages.joined(separator: ", "))).",
                  fix: "List every language the form is written in under \"languages\", the default among them.")
        }
        for (index, language) in form.languages.enumerated() where form.languages[..<index].contains(language) {
            error("language-duplicate", .root.appending("languages").appending(index), "The language \"\(language)\" is listed twice.", fix: "List each language once.")
        }
        for (index, page) in form.pages.enumerated() {
            if let title = page.title { checkLanguages(of: title, at: .root.appending("pages").appending(index).appending("title"), in: form, error) }
        }
        var pageIDs: [String: Int] = [:]
        var fieldPaths: [String: JSONPath] = [:]
        for (pageIndex, page) in form.pages.enumerated() {
            let pagePath = JSONPath.root.appending("pages").appending(pageIndex)
            if let earlier = pageIDs[page.id] {
                error("duplicate-page-id", pagePath.appending("id"), "The page id \"\(page.id)\" is already used by page \(earlier).", fix: "Give every page its own id.")
            }
            pageIDs[page.id] = pageIndex
            // Every field at any depth, with its JSON path (a repeat's fields under its "fields").
            var stack: [(FieldDefinition, JSONPath)] = page.fields.enumerated().reversed().map { ($1, pagePath.appending("fields").appending($0)) }
            while let (field, path) = stack.popLast() {
                if let earlier = fieldPaths[field.id] {
                    error("duplicate-field-id", path.appending("id"), "The field id \"\(field.id)\" is already used at \(earlier).", fix: "Give every field of the form its own id, inside repeats too; answers are stored by id.")
                } else {
                    fieldPaths[field.id] = path
                }
                if field.id.hasPrefix("__") {
                    error("reserved-field-id", path.appending("id"), "The field id \"\(field.id)\" starts with __, which is kept for what the system stores in a record (such as \(AnswerKey.entityChange)).", fix: "Rename the field so that it does not start with two underscores.")
                }
                checkOptions(field, at: path, error)
                for (textPath, text) in ExpressionChecker.localizedTexts(of: field, at: path) {
                    checkLanguages(of: text, at: textPath, in: form, error)
                }
                if let pattern = field.pattern {
                    findings += patternRiskFindings(pattern, at: path.appending("pattern"), in: loaded)
                }
                if field.defaultValue == nil, field.defaultExpression == nil, loaded.document.value(at: path.appending("default")) != nil {
                    error("default-invalid", path.appending("default"), "The default is not \(FieldValidator.expectation(field.kind)), which a \(field.kind.rawValue) field holds.", fix: "Write the default in the field's plain JSON form, like \"high\", 3 or true, or as {\"expression\": \"today()\"}.")
                }
                if field.kind == .repeat, let children = field.fields {
                    for (index, child) in children.enumerated().reversed() { stack.append((child, path.appending("fields").appending(index))) }
                }
            }
        }
        checkEntity(form, fieldPaths: fieldPaths, error)
        SensitiveFieldChecker.check(form, fieldPaths: fieldPaths, error)
        findings += ExpressionChecker(loaded: loaded, fieldPaths: fieldPaths).check()
        return findings
    }

    /// The form's entity declaration is one ODK's rules give a meaning to, and its fields' `saveTo` are sound: a
    /// form with an entity list, a property saved by one field, no property the entity keeps itself, no field of
    /// a repeat (an entity per instance is not supported yet), no note or repeat.
    static func checkEntity(_ form: FormDefinition, fieldPaths: [String: JSONPath], _ error: (String, JSONPath, String, String) -> Void) {
        let entityPath = JSONPath.root.appending("entity")
        if let entity = form.entity {
            if entity.list.hasPrefix("__") {
                error("entity-list-name", entityPath.appending("list"), "The entity list name \"\(entity.list)\" starts with __, which is kept for the system's own names.", "Name the list without the leading underscores, like households.")
            }
            if entity.updateIf != nil, entity.entityID == nil {
                error("entity-update-without-id", entityPath.appending("updateIf"), "The form updates an entity (\"updateIf\") but does not say which: it has no \"entityId\".",
                      "Add \"entityId\", usually the field where the entity is chosen (a choice field with \"choicesFrom\": {\"entityList\": \"\(entity.list)\"}).")
            }
            if entity.entityID != nil, entity.createIf != nil, entity.updateIf == nil {
                error("entity-create-without-update-if", entityPath.appending("createIf"), "The form names an entity to update (\"entityId\") and has a \"createIf\", but no \"updateIf\" to say when it updates instead of creating.",
                      "Add \"updateIf\" (the two conditions should not hold together), or remove \"createIf\" to always update.")
            }
            if entity.entityID == nil, entity.label == nil {
                error("entity-label-missing", entityPath, "The form creates entities in \"\(entity.list)\" but gives them no \"label\", which every entity has.",
                      "Add \"label\": an expression like concat(head_name, ' ', village).")
            }
        }
        let fields = FormFields(form: form)
        var savedBy: [String: String] = [:]
        for id in fields.order {
            guard let field = fields.byID[id], let property = field.saveTo, let path = fieldPaths[id]?.appending("saveTo") else { continue }
            guard form.entity != nil else {
                error("save-to-without-entity", path, "The field \"\(id)\" saves to the entity property \"\(property)\", but the form declares no entity list.",
                      "Add \"entity\": {\"list\": …, \"label\": …} to the form, or remove \"saveTo\".")
                continue
            }
            if !field.holdsValue {
                error("save-to-not-a-value", path, "The field \"\(id)\" is a \(field.kind.rawValue), which holds no answer to save.", "Move \"saveTo\" to a field that takes or computes an answer.")
            } else if !fields.repeatChain(id).isEmpty {
                error("save-to-in-repeat", path, "The field \"\(id)\" is inside the repeat \"\(fields.repeatChain(id).last ?? "")\"; an entity saved from each repeat instance is not supported yet.",
                      "Save properties from fields outside repeats.")
            } else if let problem = EntityDeclaration.propertyProblem(property) {
                error("save-to-reserved", path, "The field \"\(id)\" saves to \(problem).", "Save to a property of its own name, like \(property.lowercased() == "label" ? "title" : "\(id)").")
            } else if let earlier = savedBy[property] {
                error("save-to-duplicate", path, "The entity property \"\(property)\" is already saved by the field \"\(earlier)\" (\(fieldPaths[earlier]?.description ?? earlier)).",
                      "Save each property from one field; give this one another property name.")
            } else {
                savedBy[property] = id
            }
        }
    }

    /// A text written in languages names only the form's `languages`.
    static func checkLanguages(of text: LocalizedText, at path: JSONPath, in form: FormDefinition, _ error: (String, JSONPath, String, String) -> Void) {
        for language in text.translations.keys.sorted() where !form.languages.contains(language) {
            error("language-unknown", path.appending(language),
                  "The text is written in \"\(language)\", which is not one of the form's languages (\(form.languages.isEmpty ? "it lists none" : form.languages.joined(separator: ", "))).",
                  "Add \"\(language)\" to the form's \"languages\", or write the text's language as the list names it.")
        }
    }

    /// `text` as findings quote it: long conditions and patterns shortened, so a finding stays readable.
    static func shown(_ text: String) -> String {
        text.count > 80 ? String(text.prefix(77)) + "…" : text
    }

    /// A finding for each part of `pattern` that can backtrack catastrophically: an error when a value built
    /// to exercise it exhausts the work allowed for one value, a warning otherwise.
    static func patternRiskFindings(_ pattern: String, at path: JSONPath, in loaded: LoadedForm) -> [Finding] {
        PatternRisk.analyze(pattern).map { risk in
            if risk.shape == .backreference {
                return Finding(.error, rule: "pattern-backreference", file: loaded.file, path: path, location: loaded.location(of: path),
                               message: "The pattern \"\(shown(pattern))\" uses a backreference (\(risk.group)): each step of the check then compares a stretch of text of any length, so the server cannot bound the work a value takes.",
                               fix: "Write the repeated part out instead of referring back to it, like (ab)(ab)* for (ab)\\1*, or check the relation between answers with a constraint.")
            }
            let sample = risk.sample.count > 24 ? String(risk.sample.prefix(20)) + "…" : risk.sample
            let why: String
            let fix: String
            switch risk.shape {
            case .nestedQuantifier:
                why = "repeats a group that itself repeats (\(risk.group)), so a run of text can be split between the repetitions in exponentially many ways"
                fix = "Repeat once: write (a+)+ as a+, (\\w+\\s?)* as [\\w\\s]*; or make the repetitions unambiguous with a separator that must appear, like (\\w+-)*\\w+."
            case .overlappingAlternatives:
                why = "repeats alternatives that can start with the same character (\(risk.group)), so text can be matched by them in exponentially many ways"
                fix = "Make the alternatives exclusive or merge them into one class: write (a|aa)* as a*, (\\d|\\w)+ as \\w+."
            case .backreference:
                why = "uses a backreference (\(risk.group))"
                fix = "Write the repeated part out instead of referring back to it."
            }
            if risk.confirmed {
                return Finding(.error, rule: "pattern-catastrophic-backtracking", file: loaded.file, path: path, location: loaded.location(of: path),
                               message: "The pattern \"\(shown(pattern))\" \(why): checking a value like \"\(sample)\" (\(risk.sample.count) characters) needs more than the work allowed for one value, so such values could never be accepted.",
                               fix: fix)
            }
            return Finding(.warning, rule: "pattern-backtracking-risk", file: loaded.file, path: path, location: loaded.location(of: path),
                           message: "The pattern \"\(shown(pattern))\" \(why); checks of some values may be slow or cut short.",
                           fix: fix)
        }
    }

    private static func checkOptions(_ field: FieldDefinition, at path: JSONPath, _ error: (String, JSONPath, String, String) -> Void) {
        func fail(_ rule: String, _ key: String, _ message: String, fix: String) { error(rule, path.appending(key), message, fix) }
        let kind = field.kind
        if !kind.hasChoices, field.choices != nil {
            fail("option-not-for-kind", "choices", "\"choices\" applies only to singleChoice, multipleChoice and rank fields, not to \(kind.rawValue).", fix: "Remove \"choices\" or change the kind.")
        }
        if !kind.hasNumericRange {
            if field.min != nil { fail("option-not-for-kind", "min", "\"min\" applies only to integer and decimal fields, not to \(kind.rawValue).", fix: "Remove \"min\" or change the kind.") }
            if field.max != nil { fail("option-not-for-kind", "max", "\"max\" applies only to integer and decimal fields, not to \(kind.rawValue).", fix: "Remove \"max\" or change the kind.") }
        }
        if !kind.hasTextConstraints {
            for (key, present) in [("minLength", field.minLength != nil), ("maxLength", field.maxLength != nil), ("pattern", field.pattern != nil)] where present {
                fail("option-not-for-kind", key, "\"\(key)\" applies only to text and multilineText fields, not to \(kind.rawValue).", fix: "Remove \"\(key)\" or change the kind.")
            }
        }
        if !kind.takesAttachment {
            for (key, present) in [("maxBytes", field.maxBytes != nil), ("accept", field.accept != nil)] where present {
                fail("option-not-for-kind", key, "\"\(key)\" applies only to photo, audio and file fields, not to \(kind.rawValue).", fix: "Remove \"\(key)\" or change the kind.")
            }
        } else {
            if field.defaultValue != nil || field.defaultExpression != nil || field.calculation != nil {
                fail("option-not-for-kind", field.calculation != nil ? "calculation" : "default", "A \(kind.rawValue) field holds a file the person attaches; it cannot have a default or a calculation.", fix: "Remove the option.")
            }
            for (index, pattern) in (field.accept ?? []).enumerated() where !MediaType.isValidPattern(pattern) {
                error("media-type-invalid", path.appending("accept").appending(index), "\"\(shown(pattern))\" is not a media type like image/jpeg, a wildcard like image/*, or */*.", "Correct the media type.")
            }
            if kind == .photo, let accept = field.accept, let other = accept.first(where: { !$0.lowercased().hasPrefix("image/") }) {
                error("media-type-not-for-kind", path.appending("accept"), "A photo field accepts images, but \"accept\" lists \"\(shown(other))\".", "Use a file field for other kinds of file, or list only image types.")
            }
        }
        let requiredAtAll = field.required || field.requiredExpression != nil
        if kind == .note, requiredAtAll || field.defaultValue != nil {
            fail("option-not-for-kind", requiredAtAll ? "required" : "default", "A note is read-only text; it cannot be required or have a default.", fix: "Remove the option, or use a text field.")
        }
        if kind != .repeat {
            for (key, present) in [("fields", field.fields != nil), ("minCount", field.minCount != nil), ("maxCount", field.maxCount != nil), ("countFrom", field.countFrom != nil), ("instanceLabel", field.instanceLabel != nil)] where present {
                fail("option-not-for-kind", key, "\"\(key)\" applies only to repeat fields, not to \(kind.rawValue).", fix: "Remove \"\(key)\" or make the field a repeat.")
            }
        } else {
            for (key, present) in [("required", requiredAtAll), ("default", field.defaultValue != nil || field.defaultExpression != nil), ("calculation", field.calculation != nil), ("constraint", field.constraint != nil)] where present {
                fail("option-not-for-kind", key, "\"\(key)\" does not apply to a repeat; its fields take answers, the repeat itself holds instances.", fix: "Put \"\(key)\" on a field inside the repeat, or use minCount for a repeat that must have instances.")
            }
            if let low = field.minCount, let high = field.maxCount, low > high {
                fail("range-inverted", "minCount", "\"minCount\" (\(low)) is greater than \"maxCount\" (\(high)).", fix: "Swap them or correct one.")
            }
        }
        if kind == .note || kind == .calculate {
            for (key, present) in [("constraint", field.constraint != nil), ("required", requiredAtAll && kind == .calculate)] where present {
                fail("option-not-for-kind", key, "\"\(key)\" does not apply to a \(kind.rawValue) field, which nobody types.", fix: "Remove \"\(key)\".")
            }
        }
        if kind == .note, field.calculation != nil {
            fail("option-not-for-kind", "calculation", "A note holds no value, so it cannot have a calculation.", fix: "Use a text field with the calculation to show a computed value.")
        }
        if field.choiceFilter != nil, !kind.hasChoices {
            fail("option-not-for-kind", "choiceFilter", "\"choiceFilter\" applies only to singleChoice, multipleChoice and rank fields, not to \(kind.rawValue).", fix: "Remove \"choiceFilter\" or change the kind.")
        }
        if field.choicesFrom != nil {
            if kind != .singleChoice && kind != .multipleChoice {
                fail("option-not-for-kind", "choicesFrom", "\"choicesFrom\" applies only to singleChoice and multipleChoice fields, not to \(kind.rawValue).", fix: "Remove \"choicesFrom\" or change the kind.")
            } else if field.choices != nil {
                fail("choices-and-choices-from", "choicesFrom", "The field lists its own \"choices\" and takes them from an entity list (\"choicesFrom\") too.", fix: "Keep one: the choices listed, or the entity list's.")
            }
        }
        if field.constraintMessage != nil, field.constraint == nil {
            fail("option-not-for-kind", "constraintMessage", "\"constraintMessage\" is shown when the constraint fails, but the field has no \"constraint\".", fix: "Add a \"constraint\" or remove the message.")
        }
        if let low = field.min, let high = field.max, low > high {
            fail("range-inverted", "min", "\"min\" (\(AnswerValue.format(low))) is greater than \"max\" (\(AnswerValue.format(high))).", fix: "Swap them or correct one.")
        }
        if let low = field.minLength, let high = field.maxLength, low > high {
            fail("range-inverted", "minLength", "\"minLength\" (\(low)) is greater than \"maxLength\" (\(high)).", fix: "Swap them or correct one.")
        }
        if let pattern = field.pattern, !PatternMatcher.isValid(pattern) {
            fail("pattern-invalid", "pattern", "\"\(shown(pattern))\" is not a valid regular expression of at most \(PatternMatcher.maximumPatternLength) characters.", fix: "Correct the regular expression.")
        }
        if let choices = field.choices {
            // A value may appear twice only where a choiceFilter tells the choices apart by their properties (the
            // cascading select: a county of the same name in two states); the earlier answers then say which.
            var seen: [String: Set<[String: String]>] = [:]
            for (index, choice) in choices.enumerated() {
                let properties = choice.properties ?? [:]
                if let earlier = seen[choice.value], field.choiceFilter == nil || earlier.contains(properties) {
                    error("duplicate-choice", path.appending("choices").appending(index).appending("value"),
                          field.choiceFilter == nil ? "The choice value \"\(choice.value)\" appears twice." : "The choice value \"\(choice.value)\" appears twice with the same properties, so the choiceFilter cannot tell them apart.",
                          "Give every choice its own value\(field.choiceFilter == nil ? "" : ", or properties that tell the filter which to offer").")
                }
                seen[choice.value, default: []].insert(properties)
            }
        }
        if let value = field.defaultValue {
            let issues = FieldValidator.issues(for: field, answer: value)
            if let first = issues.first {
                fail("default-invalid", "default", "The default does not fit the field: \(first.message)", fix: "Give a default the field accepts, or remove it.")
            }
        }
    }
}

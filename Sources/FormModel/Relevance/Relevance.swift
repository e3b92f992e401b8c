/// The relevance conditions of one form, parsed once and ordered so that each field's
/// condition is evaluated after the fields it reads.
///
/// A field that is not relevant counts as unanswered in other conditions, so hiding a field
/// also hides what depends on it. Fields inside a repeat are shown or hidden per instance (keys
/// `defects/<id>/severity`), and hiding a repeat hides every field of its instances.
public struct Relevance: Sendable {
    /// The form's parsed expressions and indexed fields.
    public let logic: FormLogic

    /// Parsed conditions by field id; fields without one are always relevant.
    public var conditions: [String: FormExpression] { logic.relevant }

    /// Builds the relevance of a form whose conditions already passed the loader's checks
    /// (they parse, name known fields and have no cycle); a condition that does not parse is treated as always relevant.
    public init(form: FormDefinition) {
        self.logic = FormLogic(form: form)
    }

    /// The relevance of a form whose `FormLogic` is already built (say, shared with a `FormValidator`).
    public init(logic: FormLogic) {
        self.logic = logic
    }

    /// Whether the field `key` is shown for these answers, evaluating only the conditions it depends on
    /// (so checking one field of a wide form costs what its own conditions cost, not the whole form).
    public func isRelevant(_ key: String, for answers: [String: AnswerValue]) -> Bool {
        guard let path = AnswerKey(key) else { return true }
        var needed: Set<String> = [path.field]
        var stack = [path.field] + path.steps.map(\.group)
        needed.formUnion(stack)
        while let next = stack.popLast() {
            for name in logic.reads[next] ?? [] where needed.insert(name).inserted {
                stack.append(name)
            }
        }
        return FormState(logic: logic, answers: answers, only: needed).isRelevant(key)
    }

    /// The keys of the fields shown for these answers (`site`, and `defects/<id>/severity` for each live instance).
    public func relevantFields(for answers: [String: AnswerValue]) -> Set<String> {
        let state = FormState(logic: logic, answers: answers)
        var relevant = Set<String>()
        for id in logic.fields.order {
            for prefix in state.occurrences(of: id) {
                let key = AnswerKey.key(id, in: prefix)
                if state.isRelevant(key) { relevant.insert(key) }
            }
        }
        return relevant
    }
}

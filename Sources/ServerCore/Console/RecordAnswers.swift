import FormModel

/// A record's values as labelled answers, in form order, with each repeat's live instances nested (labels from
/// the definition of the version the record was filled in; computed values included).
struct RecordAnswers {
    struct Item {
        var label: String
        var isRepeat: Bool
        var hasValue: Bool
        var text: String
        var instances: [Instance]
    }

    struct Instance {
        var heading: String
        var nested: RecordAnswers
    }

    var items: [Item]

    init(items: [Item]) {
        self.items = items
    }

    /// The answers of `values` under `definition`; without one (a version the server does not hold), every
    /// stored value under its key.
    init(definition: FormDefinition?, values: [String: AnswerValue]) {
        guard let definition else {
            self.init(items: values.keys.sorted().compactMap { key in
                values[key].map { Item(label: key, isRepeat: false, hasValue: true, text: $0.display(), instances: []) }
            })
            return
        }
        let fields = FormFields(form: definition)
        let state = FormState(logic: FormLogic(form: definition), answers: values)
        var children: [String: [FieldDefinition]] = [:]
        for id in fields.order {
            guard let field = fields.byID[id] else { continue }
            children[fields.container[id] ?? "", default: []].append(field)
        }
        func items(in group: String, prefix: String) -> [Item] {
            children[group, default: []].compactMap { field in
                if field.kind == .repeat {
                    let instances = state.instances.live(field.id, in: prefix).enumerated().map { index, instance in
                        Instance(heading: "\(field.instanceLabel ?? field.label) \(index + 1)", nested: RecordAnswers(items: items(in: field.id, prefix: instance.prefix)))
                    }
                    return Item(label: field.label, isRepeat: true, hasValue: false, text: "", instances: instances)
                }
                guard field.holdsValue else { return nil }
                let key = prefix.isEmpty ? field.id : prefix + "/" + field.id
                let value = state.computed[key] ?? state.answers[key]
                return Item(label: field.label, isRepeat: false, hasValue: value != nil, text: value?.display(for: field) ?? "", instances: [])
            }
        }
        self.init(items: items(in: "", prefix: ""))
    }
}

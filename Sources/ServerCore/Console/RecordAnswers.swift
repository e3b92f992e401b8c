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
        /// For an attachment answer: its link, and whether the server still waits for its bytes.
        var attachment: Attachment? = nil
    }

    /// An attachment answer: a link through the console's own access check (``AttachmentDownload``), or a note
    /// that it has not arrived yet.
    struct Attachment {
        var href: String
        var waiting: Bool
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
    /// stored value under its key. Attachment answers link to `attachmentBase/<sha256>` unless the hash is
    /// among `missing`. Labels and choices read in `language` (one of the form's languages; nil for its default).
    init(definition: FormDefinition?, values: [String: AnswerValue], attachmentBase: String? = nil, missing: Set<String> = [], language: String? = nil) {
        func attachment(_ value: AnswerValue?) -> Attachment? {
            guard case .attachment(let reference)? = value, let attachmentBase else { return nil }
            return Attachment(href: "\(attachmentBase)/\(reference.sha256)", waiting: missing.contains(reference.sha256))
        }
        guard let definition else {
            self.init(items: values.keys.sorted().compactMap { key in
                values[key].map { Item(label: key, isRepeat: false, hasValue: true, text: $0.display(), instances: [], attachment: attachment($0)) }
            })
            return
        }
        let fields = FormFields(form: definition)
        var state = FormState(logic: FormLogic(form: definition), answers: values)
        state.language = language
        var children: [String: [FieldDefinition]] = [:]
        for id in fields.order {
            guard let field = fields.byID[id] else { continue }
            children[fields.container[id] ?? "", default: []].append(field)
        }
        func items(in group: String, prefix: String) -> [Item] {
            children[group, default: []].compactMap { field in
                if field.kind == .repeat {
                    let instances = state.instances.live(field.id, in: prefix).enumerated().map { index, instance in
                        Instance(heading: "\(state.text(field.instanceNoun, at: instance.prefix + "/" + AnswerKey.position)) \(index + 1)", nested: RecordAnswers(items: items(in: field.id, prefix: instance.prefix)))
                    }
                    return Item(label: state.text(field.label, at: AnswerKey.key(field.id, in: prefix)), isRepeat: true, hasValue: false, text: "", instances: instances)
                }
                guard field.holdsValue else { return nil }
                let key = prefix.isEmpty ? field.id : prefix + "/" + field.id
                let value = state.computed[key] ?? state.answers[key]
                return Item(
                    label: state.text(field.label, at: key), isRepeat: false, hasValue: value != nil, text: value?.display(for: field, language: language) ?? "", instances: [],
                    attachment: attachment(value))
            }
        }
        self.init(items: items(in: "", prefix: ""))
    }
}

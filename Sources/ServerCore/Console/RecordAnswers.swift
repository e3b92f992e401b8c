import FormModel

/// A record's values as labelled answers, in form order, with each repeat's live instances nested (labels from
/// the definition of the version the record was filled in; computed values included). A repeat shows at most
/// ``instancesPerPage`` instances, from the page's `from` on, with links to the pages before and after: a record
/// of 2,000 instances is a page of 50, not megabytes of HTML.
struct RecordAnswers {
    /// Most instances of one repeat a page shows.
    static let instancesPerPage = 50

    /// Where a repeat's shown instances lie among all of them, and the links to the others.
    struct Paging {
        var summary: String
        var previous: String?
        var next: String?
    }

    struct Item {
        var label: String
        var isRepeat: Bool
        var hasValue: Bool
        var text: String
        var instances: [Instance]
        /// For an attachment answer: its link, and whether the server still waits for its bytes.
        var attachment: Attachment? = nil
        /// For a repeat of more instances than a page shows.
        var paging: Paging? = nil
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
    /// Each repeat at the top of the form shows its instances from the `from`th (0 first) on, `pageLink` giving
    /// the address of the page starting at another; a repeat inside an instance shows its first
    /// ``instancesPerPage``.
    init(
        definition: FormDefinition?, values: [String: AnswerValue], attachmentBase: String? = nil, missing: Set<String> = [],
        language: String? = nil, from: Int = 0, pageLink: (Int) -> String = { "?from=\($0)" }
    ) {
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
                    let live = state.instances.live(field.id, in: prefix)
                    let start = prefix.isEmpty ? max(0, from) : 0
                    let shown = min(start, live.count)..<min(start + Self.instancesPerPage, live.count)
                    let instances = shown.map { index in
                        Instance(
                            heading: "\(state.text(field.instanceNoun, at: live[index].prefix + "/" + AnswerKey.position)) \(index + 1)",
                            nested: RecordAnswers(items: items(in: field.id, prefix: live[index].prefix)))
                    }
                    let label = state.text(field.label, at: AnswerKey.key(field.id, in: prefix))
                    var paging: Paging?
                    if live.count > Self.instancesPerPage || start > 0 {
                        let what = shown.isEmpty ? "none of the \(live.count) on this page" : "\(shown.lowerBound + 1)–\(shown.upperBound) of \(live.count)"
                        paging = Paging(
                            summary: "\(label): \(what)",
                            previous: prefix.isEmpty && start > 0 ? pageLink(max(0, start - Self.instancesPerPage)) : nil,
                            next: prefix.isEmpty && start + Self.instancesPerPage < live.count ? pageLink(start + Self.instancesPerPage) : nil)
                    }
                    return Item(label: label, isRepeat: true, hasValue: false, text: "", instances: instances, paging: paging)
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

import FormModel

extension FormSession {
    /// Applies scripted inputs by address (`site=…`, `defects[2].severity=high`) and removals (`defects[2]`),
    /// durable together in one transaction before it returns. An instance number one past the last live
    /// instance adds an instance (with a new id and its defaults); later addresses with that number mean the
    /// instance just added. Nothing is written when any address is wrong.
    /// - Returns: each input's record key and issues with the answers as they end up, in the order given.
    @discardableResult
    public func set(addressed inputs: [(address: String, input: String)], removing removals: [String] = []) async throws -> [(key: String, issues: [FieldIssue])] {
        try requireOpen()
        var instances = state.instances
        var edits: [DraftStore.Edit] = []
        var keys: [String] = []
        func add(_ edit: DraftStore.Edit) {
            edits.append(edit)
            instances.note(edit.field, edit.value)
        }
        func resolve(_ text: String, adding: Bool) throws -> (prefix: String, field: String?) {
            let address: FieldAddress
            do { address = try FieldAddress(text) } catch {
                throw DraftStoreError(.unknownField, "\(error.description) Nothing was saved.")
            }
            var parent = ""
            for step in address.steps {
                let chain = parent.isEmpty ? [] : (AnswerKey(parent + "/x")?.steps.map(\.group) ?? [])
                guard let group = validator.field(step.group), group.kind == .repeat, validator.logic.fields.repeatChain(step.group) == chain else {
                    let repeats = form.everyField.filter { $0.kind == .repeat }.map(\.id)
                    throw DraftStoreError(.unknownInstance, "\"\(text)\": the form \(form.id) has no repeat \"\(step.group)\" there; its repeats are: \(repeats.isEmpty ? "none" : repeats.joined(separator: ", ")). Nothing was saved.")
                }
                let live = instances.live(step.group, in: parent)
                if step.index <= live.count {
                    parent = live[step.index - 1].prefix
                } else if adding, step.index == live.count + 1 {
                    if let maximum = group.maxCount, live.count >= maximum {
                        throw DraftStoreError(.tooManyInstances, "\"\(text)\": \(group.label) already has its \(maximum) \(group.instanceNoun.lowercased())s at most. Nothing was saved.")
                    }
                    let prefix = AnswerKey.key(step.group, in: parent) + "/" + AnswerKey.newInstanceID()
                    add(DraftStore.Edit(field: prefix + "/" + AnswerKey.position, label: group.instanceNoun, value: .integer(instances.nextPosition(step.group, in: parent))))
                    for (key, value) in validator.defaults(for: group.fields ?? [], in: prefix, answers: answers).sorted(by: { $0.key < $1.key }) {
                        add(DraftStore.Edit(field: key, label: validator.field(forKey: key)?.label ?? key, value: value))
                    }
                    parent = prefix
                } else {
                    let range = live.isEmpty ? "it has none yet" : "it has \(live.count): \(step.group)[1]…\(step.group)[\(live.count)]"
                    throw DraftStoreError(.unknownInstance, "\"\(text)\": \(group.label) has no \(group.instanceNoun.lowercased()) \(step.index); \(range)\(adding ? ", and \(step.group)[\(live.count + 1)] adds one" : ""). Nothing was saved.")
                }
            }
            return (parent, address.field)
        }
        for (text, input) in inputs {
            let (prefix, name) = try resolve(text, adding: true)
            guard let name else {
                throw DraftStoreError(.unknownField, "\"\(text)\" names an instance, not a field; write \(text).FIELD=VALUE. Nothing was saved.")
            }
            let key = AnswerKey.key(name, in: prefix)
            guard let field = validator.field(forKey: key) else {
                let inGroup = AnswerKey(key)?.steps.last.flatMap { validator.field($0.group)?.fields?.filter(\.isEditable).map(\.id) }
                let names = inGroup ?? form.allFields.filter(\.isEditable).map(\.id)
                throw DraftStoreError(.unknownField, "\"\(text)\": the form \(form.id) has no field \"\(name)\" there. The fields there are: \(names.joined(separator: ", ")). Nothing was saved.")
            }
            guard field.isEditable else {
                throw DraftStoreError(.readOnlyField, "\"\(text)\": the field \"\(name)\" of form \(form.id) \(field.isComputed ? "is computed from other answers" : "takes no answer"). Nothing was saved.")
            }
            add(DraftStore.Edit(field: key, label: field.label, value: AnswerValue.parse(input, for: field)))
            keys.append(key)
        }
        for text in removals {
            let (prefix, name) = try resolve(text, adding: false)
            guard name == nil, !prefix.isEmpty else {
                throw DraftStoreError(.unknownInstance, "--remove \"\(text)\" names a field; name an instance, like defects[2]. Nothing was saved.")
            }
            add(DraftStore.Edit(field: prefix + "/" + AnswerKey.removed, label: "remove \(text)", value: .boolean(true)))
        }
        let changed = edits.filter { answers[$0.field] != $0.value }
        if !changed.isEmpty { try await write(changed) }
        return keys.map { ($0, validator.validate(field: $0, in: state)) }
    }
}

import FormModel

extension FormSession {
    /// The live instances of the repeat `group` inside the instance at `parent` ("" for the top level), in order.
    public func instances(of group: String, in parent: String = "") -> [RepeatInstance] {
        state.instances.live(group, in: parent)
    }

    /// The value a computed field at `key` holds now (nil when hidden or empty).
    public func computedValue(_ key: String) -> AnswerValue? {
        state.computed[key]
    }

    /// The choices offered at `key`, after the field's `choiceFilter`.
    public func choices(for key: String) -> [Choice] {
        state.choices(for: key)
    }

    /// Type-to-search for an entity choice field (`choicesFrom`): the first `limit` entities it offers whose
    /// label contains `text` (ignoring case; the first ones in label order for empty text), after its
    /// `choiceFilter`, read from the device's lists. Setting the field's input to an entity's `id` chooses it.
    public func entityChoices(for key: String, matching text: String, limit: Int = 8) -> [EntityRow] {
        state.entityChoices(for: key, matching: text, limit: limit)
    }

    /// Adds an instance to the repeat `group` inside the instance at `parent`, with a new stable id made here,
    /// at the end; its `@position` and its fields' defaults are written in one durable transaction.
    /// - Returns: the new instance's key prefix (`defects/<id>`), under which its fields are set.
    /// - Throws: `unknownInstance` when `group` is not a repeat at that place, `tooManyInstances` at `maxCount`.
    @discardableResult
    public func addInstance(to group: String, in parent: String = "") async throws -> String {
        try requireOpen()
        let definition = try repeatField(group, in: parent)
        let live = state.instances.live(group, in: parent)
        if let maximum = definition.maxCount, live.count >= maximum {
            throw DraftStoreError(.tooManyInstances, "\(definition.label) already has \(live.count) of at most \(maximum) \(definition.instanceNoun.text.lowercased())s; remove one first.")
        }
        let prefix = AnswerKey.key(group, in: parent) + "/" + AnswerKey.newInstanceID()
        var edits = [DraftStore.Edit(field: prefix + "/" + AnswerKey.position, label: definition.instanceNoun.text,
                                     value: .integer(state.instances.nextPosition(group, in: parent)))]
        for (key, value) in validator.defaults(for: definition.fields ?? [], in: prefix, answers: answers).sorted(by: { $0.key < $1.key }) {
            edits.append(DraftStore.Edit(field: key, label: validator.field(forKey: key)?.label.text ?? key, value: value))
        }
        edits += restorations(for: prefix + "/" + AnswerKey.position)
        try await write(edits)
        return prefix
    }

    /// Removes the instance at `prefix` (`defects/<id>`): a tombstone (`@removed` true) that merges like any field;
    /// its answers stay in the record, so an edit elsewhere can bring it back.
    public func removeInstance(_ prefix: String) async throws {
        try requireOpen()
        guard let instance = state.instances.instance(prefix), !instance.removed else {
            throw DraftStoreError(.unknownInstance, "Record \(recordKey) has no instance \(prefix) to remove.")
        }
        try await write([DraftStore.Edit(field: prefix + "/" + AnswerKey.removed, label: "remove \(prefix)", value: .boolean(true))])
    }

    /// Whether the instance at `prefix` holds anything a person typed (so removing it asks first).
    public func instanceHasContent(_ prefix: String) -> Bool {
        state.instanceHasContent(prefix)
    }

    /// The definition of the repeat `group` placed inside the instance at `parent`.
    func repeatField(_ group: String, in parent: String) throws -> FieldDefinition {
        let chain = parent.isEmpty ? [] : (AnswerKey(parent + "/x")?.steps.map(\.group) ?? [])
        guard let definition = validator.field(group), definition.kind == .repeat, validator.logic.fields.repeatChain(group) == chain else {
            let repeats = form.everyField.filter { $0.kind == .repeat }.map(\.id)
            throw DraftStoreError(.unknownInstance, "The form \(form.id) has no repeat \"\(group)\"\(parent.isEmpty ? "" : " inside \(parent)"); its repeats are: \(repeats.isEmpty ? "none" : repeats.joined(separator: ", ")).")
        }
        if !parent.isEmpty, state.instances.instance(parent)?.removed != false {
            throw DraftStoreError(.unknownInstance, "Record \(recordKey) has no instance \(parent).")
        }
        return definition
    }

    /// Editing inside a removed instance brings it back (and the instances around it): the `@removed = false`
    /// edits to write along with an edit of `key`.
    func restorations(for key: String) -> [DraftStore.Edit] {
        guard let path = AnswerKey(key) else { return [] }
        var edits: [DraftStore.Edit] = []
        var prefix = ""
        for step in path.steps {
            prefix = AnswerKey.key(step.group, in: prefix) + "/" + step.instance
            if state.instances.instance(prefix)?.removed == true, key != prefix + "/" + AnswerKey.removed {
                edits.append(DraftStore.Edit(field: prefix + "/" + AnswerKey.removed, label: "restore \(prefix)", value: .boolean(false)))
            }
        }
        return edits
    }
}

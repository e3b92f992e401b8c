/// Every field of a form at any depth, indexed once: by id, which repeat holds each, and in form order.
///
/// Field ids are unique across the whole form, repeats included, so a name in an expression means one field.
public struct FormFields: Sendable {
    /// Every field by id (the first, when a broken form repeats an id).
    public let byID: [String: FieldDefinition]
    /// The repeat directly holding a field; absent for top-level fields.
    public let container: [String: String]
    /// Every field id, depth first in form order (a repeat before its fields).
    public let order: [String]
    /// The repeats enclosing each field inside one, outermost first (``repeatChain(_:)``): built once, since
    /// every read of a field by an expression asks it (30,000 times to open a record of 5,000 instances).
    private let chains: [String: [String]]
    /// What a push asks of each field, by id (``facts(ofKey:)``): a few flags, read without copying the definition.
    private let facts: [String: FieldFacts]

    /// The flags of a field that checking a pushed answer reads for every key: a lookup that copies no
    /// ``FieldDefinition`` (a copy retains and releases each of its strings and arrays, for every answer).
    public struct FieldFacts: Sendable, Hashable {
        /// The field's answers are sealed to the project key (``FieldDefinition/sensitive``).
        public let sensitive: Bool
        /// The field is computed (``FieldDefinition/isComputed``).
        public let isComputed: Bool
        /// The field is not inside a repeat.
        let topLevel: Bool

        init(_ field: FieldDefinition, topLevel: Bool) {
            self.sensitive = field.sensitive
            self.isComputed = field.isComputed
            self.topLevel = topLevel
        }
    }

    /// Indexes every field of `form`.
    public init(form: FormDefinition) {
        var byID: [String: FieldDefinition] = [:]
        var container: [String: String] = [:]
        var order: [String] = []
        var stack: [(field: FieldDefinition, parent: String?)] = form.allFields.reversed().map { ($0, nil) }
        while let (field, parent) = stack.popLast() {
            order.append(field.id)
            if byID[field.id] == nil {
                byID[field.id] = field
                if let parent { container[field.id] = parent }
            }
            for child in (field.fields ?? []).reversed() where field.kind == .repeat {
                stack.append((child, field.id))
            }
        }
        self.byID = byID
        self.container = container
        self.order = order
        var chains: [String: [String]] = [:]
        for id in container.keys {
            var chain: [String] = []
            var next = container[id]
            while let group = next, chain.count <= byID.count {
                chain.append(group)
                next = container[group]
            }
            chains[id] = chain.reversed()
        }
        self.chains = chains
        self.facts = Dictionary(uniqueKeysWithValues: byID.map { ($0.key, FieldFacts($0.value, topLevel: container[$0.key] == nil)) })
    }

    /// The repeats enclosing `id`, outermost first (empty for a top-level field).
    public func repeatChain(_ id: String) -> [String] {
        chains[id] ?? []
    }

    /// Whether any field of the form is a repeat.
    public var hasRepeats: Bool { !container.isEmpty }

    /// The definition a record field key refers to, when the key's instance steps follow the form's repeats:
    /// for `@position`/`@removed` that is the repeat itself.
    public func definition(of key: AnswerKey) -> FieldDefinition? {
        let groups = key.steps.map(\.group)
        if key.isInstanceMeta {
            guard let last = groups.last, let group = byID[last], group.kind == .repeat, repeatChain(last) + [last] == groups else { return nil }
            return group
        }
        guard let field = byID[key.field], repeatChain(key.field) == groups else { return nil }
        return field
    }

    /// The policy that decides conflicts on the record field `key` (`site`, `defects/<id>/severity`,
    /// `defects/<id>/@removed`): the field's own, else its repeat's (innermost first), else `formPolicy`.
    public func conflictPolicy(for key: String, formPolicy: ConflictPolicy) -> ConflictPolicy {
        guard let path = AnswerKey(key) else { return formPolicy }
        let id = path.isInstanceMeta ? path.steps.last?.group ?? path.field : path.field
        if let own = byID[id]?.conflictPolicy { return own }
        for step in path.steps.reversed() {
            if let policy = byID[step.group]?.conflictPolicy { return policy }
        }
        return formPolicy
    }

    /// The definition of the field a stored key refers to.
    public func definition(ofKey key: String) -> FieldDefinition? {
        // A flat key (no `/`: every key of a form without repeats) is a top-level field's id: looked up as it
        // is, without reading it into an `AnswerKey` (a push validates each of its fields' keys this way).
        guard key.utf8.contains(UInt8(ascii: "/")) else {
            guard !key.isEmpty, key.utf8.first != UInt8(ascii: "@"), let field = byID[key], container[key] == nil else { return nil }
            return field
        }
        return AnswerKey(key).flatMap(definition(of:))
    }

    /// The flags of the field ``definition(ofKey:)`` finds for `key` (nil when it finds none), without copying
    /// its definition for a flat key.
    public func facts(ofKey key: String) -> FieldFacts? {
        guard key.utf8.contains(UInt8(ascii: "/")) else {
            guard !key.isEmpty, key.utf8.first != UInt8(ascii: "@"), let found = facts[key], found.topLevel else { return nil }
            return found
        }
        return definition(ofKey: key).map { FieldFacts($0, topLevel: false) }
    }
}

extension FormDefinition {
    /// Every field at any depth (repeats' fields too), depth first in form order.
    public var everyField: [FieldDefinition] {
        let index = FormFields(form: self)
        return index.order.compactMap { index.byID[$0] }
    }
}

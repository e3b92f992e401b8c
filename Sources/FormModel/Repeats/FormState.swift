import Foundation

/// A record's answers evaluated against its form: which fields are shown, what computed fields hold, and the
/// instances of every repeat. Built once for a set of answers; `apply(_:)` updates it after edits by evaluating
/// again only the fields that depend on what changed (in the edited instance, when they read only their own).
public struct FormState: Sendable {
    /// The form's parsed expressions and indexed fields.
    public let logic: FormLogic
    /// The answers as given and edited, by record key; computed values are in `computed`.
    public private(set) var answers: [String: AnswerValue]
    /// The instances of every repeat, found from the answers' keys.
    public private(set) var instances: RepeatInstances
    /// Keys (`site`, `defects/<id>/severity`, `defects` for a repeat) whose `relevant` is false.
    public private(set) var hidden: Set<String> = []
    /// The values of computed fields by key (relevant ones that have a value).
    public private(set) var computed: [String: AnswerValue] = [:]
    /// Changes whenever a field is shown or hidden, or an instance is added, removed or moved: what a list of
    /// the shown fields (a sheet's rows) is built from. An edit that changes none of these (a key typed into a
    /// text field, a choice that no condition reads) leaves it as it was, so such a list need not be built again.
    public private(set) var shapeRevision = 0
    /// The clock `today()` and `now()` read during this state's evaluations.
    public var clock: ExpressionClock
    /// What `record.start`, `record.device` and the like read (nothing known: null).
    public let metadata: RecordMetadata
    /// The language texts are shown in (one of the form's `languages`); nil for the form's default. Changing
    /// it changes only what `text(_:at:)` shows, never an answer.
    public var language: String?
    /// The entity lists `entity(…)` and choice fields over a list (`choicesFrom`) read; nil: none (an entity
    /// reads as null, such a field offers no choice and accepts any id).
    public let entities: (any EntityLookup)?

    /// Evaluates every field for `answers` of a record with `metadata`, reading entity lists from `entities`.
    public init(
        logic: FormLogic, answers: [String: AnswerValue], clock: ExpressionClock = .local(), metadata: RecordMetadata = RecordMetadata(),
        entities: (any EntityLookup)? = nil
    ) {
        self.logic = logic
        self.answers = answers
        self.instances = RepeatInstances(answers: answers)
        self.clock = clock
        self.metadata = metadata
        self.entities = entities
        // A field without relevance or calculation has nothing to evaluate: its instances are not listed.
        for id in logic.order where logic.relevant[id] != nil || logic.calculation[id] != nil {
            evaluate(id, in: occurrences(of: id), reporting: false)
        }
    }

    /// Evaluates only `ids` (which must include what they read), for `Relevance.isRelevant`.
    init(logic: FormLogic, answers: [String: AnswerValue], only ids: Set<String>) {
        self.logic = logic
        self.answers = answers
        self.instances = RepeatInstances(answers: answers)
        self.clock = .local()
        self.metadata = RecordMetadata()
        self.entities = nil
        for id in logic.order where ids.contains(id) && (logic.relevant[id] != nil || logic.calculation[id] != nil) {
            evaluate(id, in: occurrences(of: id), reporting: false)
        }
    }

    /// Evaluates every field of `form` for `answers`, parsing the form's expressions first; for many records of one
    /// form, build its `FormLogic` once and use `init(logic:answers:clock:)`.
    public init(form: FormDefinition, answers: [String: AnswerValue]) {
        self.init(logic: FormLogic(form: form), answers: answers)
    }

    // MARK: - Reading

    /// Whether the field at `key` is shown: its own condition holds and so do those of the repeats around it.
    public func isRelevant(_ key: String) -> Bool {
        if hidden.isEmpty { return true }
        if hidden.contains(key) { return false }
        guard key.utf8.contains(UInt8(ascii: "/")) else { return true }
        // The repeat occurrence holding the innermost instance: `defects/<id>/f` → `defects`.
        var end = key.endIndex
        for _ in 0..<2 {
            guard let slash = key.utf8[..<end].lastIndex(of: UInt8(ascii: "/")) else { return true }
            end = slash
        }
        return isRelevant(String(key[..<end]))
    }

    /// The value the field at `key` stands for: nil when hidden or unanswered; the computed value of a computed field.
    public func value(_ key: String) -> AnswerValue? {
        guard let field = AnswerKey(key).flatMap({ logic.fields.byID[$0.field] }) else { return isRelevant(key) ? answers[key] : nil }
        return value(key, computed: field.isComputed)
    }

    /// ``value(_:)`` when the caller knows whether the field is computed already (an expression reading a
    /// repeat's instances does, for each of them: reading the key again would cost more than the value).
    func value(_ key: String, computed isComputed: Bool) -> AnswerValue? {
        guard isRelevant(key) else { return nil }
        if let value = computed[key] { return value }
        return isComputed ? nil : answers[key]
    }

    /// ``value(_:computed:)`` of a field of an instance whose repeat is known to be shown (a `sum()` reads
    /// every instance of one): only the field's own condition is checked.
    func value(shownInstanceField key: String, computed isComputed: Bool) -> AnswerValue? {
        guard hidden.isEmpty || !hidden.contains(key) else { return nil }
        if let value = computed[key] { return value }
        return isComputed ? nil : answers[key]
    }

    /// The live instance prefixes every occurrence of `id` lives in ("" for a top-level field), in order.
    public func occurrences(of id: String) -> [String] {
        var prefixes = [""]
        for group in logic.fields.repeatChain(id) {
            prefixes = prefixes.flatMap { parent in instances.live(group, in: parent).map(\.prefix) }
        }
        return prefixes
    }

    /// Whether the instance at `prefix` holds anything a person typed (so removing it asks first): an answer
    /// that is not blank, other than its `@position` and `@removed`.
    public func instanceHasContent(_ prefix: String) -> Bool {
        let inside = prefix + "/"
        return answers.contains { key, value in
            key.hasPrefix(inside) && !key.hasSuffix("/" + AnswerKey.position) && !key.hasSuffix("/" + AnswerKey.removed) && !value.isBlank
        }
    }

    /// The choices offered for the field at `key`: those its `choiceFilter` lets through (all when it has none).
    /// A field whose choices come from an entity list (`choicesFrom`) offers the list's entities, in label order.
    public func choices(for key: String) -> [Choice] {
        guard let path = AnswerKey(key), let field = logic.fields.byID[path.field] else { return [] }
        if field.choicesFrom != nil {
            var found: [Choice] = []
            forEachEntityChoice(at: key) { entity in
                found.append(entity.choice)
                return true
            }
            return found
        }
        let all = field.choices ?? []
        guard let filter = logic.choiceFilter[path.field] else { return all }
        var scope = Scope(state: self, prefix: path.instancePrefix, current: ExpressionValue(answers[key]))
        return all.filter { choice in
            scope.choice = choice
            return filter.evaluate(in: scope).isTruthy
        }
    }

    /// The first `limit` entities offered for the entity choice field at `key` (`choicesFrom`) whose label
    /// contains `text` (ignoring case; all for empty text), in label order: type-to-search over a list of any
    /// size stops at the first matches.
    public func entityChoices(for key: String, matching text: String, limit: Int) -> [EntityRow] {
        var found: [EntityRow] = []
        guard limit > 0 else { return found }
        forEachEntityChoice(at: key, labelContaining: text.trimmingCharacters(in: .whitespaces)) { entity in
            found.append(entity)
            return found.count < limit
        }
        return found
    }

    /// Whether `id` is an entity the entity choice field at `key` offers (of its list, let through by its
    /// filter); true for any non-empty id when this state reads no entity list.
    public func offersEntity(_ id: String, at key: String) -> Bool {
        guard let path = AnswerKey(key), let list = logic.fields.byID[path.field]?.choicesFrom?.entityList else { return false }
        guard let entities else { return !id.isEmpty }
        guard let entity = entities.entity(id, in: list) else { return false }
        guard let filter = logic.choiceFilter[path.field] else { return true }
        var scope = Scope(state: self, prefix: path.instancePrefix, current: ExpressionValue(answers[key]))
        scope.entity = entity
        return filter.evaluate(in: scope).isTruthy
    }

    /// Visits the entities the entity choice field at `key` offers whose label contains `text`, in label order,
    /// while `visit` returns true.
    func forEachEntityChoice(at key: String, labelContaining text: String = "", _ visit: (EntityRow) -> Bool) {
        guard let path = AnswerKey(key), let list = logic.fields.byID[path.field]?.choicesFrom?.entityList, let entities else { return }
        guard let filter = logic.choiceFilter[path.field] else { return entities.forEachEntity(in: list, labelContaining: text, visit) }
        var scope = Scope(state: self, prefix: path.instancePrefix, current: ExpressionValue(answers[key]))
        entities.forEachEntity(in: list, labelContaining: text) { entity in
            scope.entity = entity
            return filter.evaluate(in: scope).isTruthy ? visit(entity) : true
        }
    }

    /// Evaluates `expression` as if it belonged to the field at `key` (`.` is that field's answer).
    public func evaluate(_ expression: FormExpression, at key: String) -> ExpressionValue {
        let path = AnswerKey(key)
        return expression.evaluate(in: Scope(state: self, prefix: path?.instancePrefix ?? "", current: ExpressionValue(answers[key])))
    }

    /// The values of kept calculations (`FormLogic.kept`: they call `once()` or `uuid()`) computed but not yet
    /// stored as answers, by key; the device stores them so they are not computed again.
    public var valuesToKeep: [String: AnswerValue] {
        guard !logic.kept.isEmpty else { return [:] }
        return computed.filter { key, _ in
            guard let field = AnswerKey(key)?.field, logic.kept.contains(field) else { return false }
            return answers[key].map(\.isBlank) ?? true
        }
    }

    // MARK: - Changing

    /// Applies edits (nil clears) and evaluates again what depends on them; returns the keys whose relevance or
    /// computed value changed.
    @discardableResult
    public mutating func apply(_ edits: [String: AnswerValue?]) -> Set<String> {
        var affected: [String: Affected] = [:]
        var edited = Set<String>()
        func mark(_ id: String, _ prefix: String?) {
            guard let prefix else { return affected[id] = .all }
            // Taken out of the dictionary, so the set is not shared and an insert does not copy it.
            switch affected.removeValue(forKey: id) {
            case .all?: affected[id] = .all
            case .instances(var prefixes)?:
                prefixes.insert(prefix)
                affected[id] = .instances(prefixes)
            case nil: affected[id] = .instances([prefix])
            }
        }
        for (key, value) in edits {
            if let value { answers[key] = value } else { answers.removeValue(forKey: key) }
            guard let path = AnswerKey(key) else { continue }
            let before = path.steps.isEmpty ? nil : instances.instance(path.instancePrefix)
            instances.note(key, value)
            if let group = path.steps.last?.group {
                let after = instances.instance(path.instancePrefix)
                if before == nil || before?.removed != after?.removed || before?.position != after?.position {
                    shapeRevision &+= 1
                    // Who reads the repeat (count, sum) reads every instance; a new or restored instance's own
                    // fields are evaluated for the first time.
                    mark(group, nil)
                    edited.insert(group)
                    if after?.removed == false {
                        for child in logic.children(of: group) { mark(child, path.instancePrefix) }
                    } else if after?.removed == true {
                        forget(path.instancePrefix)
                    }
                }
            }
            if !path.isInstanceMeta {
                mark(path.field, path.instancePrefix)
                edited.insert(path.field)
            }
        }
        var changed = Set<String>()
        for id in logic.order {
            guard let entry = affected[id] else { continue }
            let prefixes: [String]
            switch entry {
            case .all: prefixes = occurrences(of: id)
            case .instances(let set): prefixes = set.filter(isLive)
            }
            let changedHere = evaluate(id, in: prefixes)
            changed.formUnion(changedHere)
            guard edited.contains(id) || !changedHere.isEmpty else { continue }
            for dependency in logic.dependents[id] ?? [] {
                if dependency.sameInstance, case .instances(let set) = entry {
                    for prefix in set { mark(dependency.reader, prefix) }
                } else {
                    mark(dependency.reader, nil)
                }
            }
        }
        return changed
    }

    /// Whether the instance at `prefix` and every instance around it exist and are not removed ("" is the top level).
    func isLive(_ prefix: String) -> Bool {
        var end = prefix.endIndex
        while !prefix[..<end].isEmpty {
            guard let instance = instances.instance(String(prefix[..<end])), !instance.removed else { return false }
            // Up two parts: `defects/<id>/actions/<id>` → `defects/<id>`.
            guard let slash = prefix[..<end].lastIndex(of: "/"), let outer = prefix[..<slash].lastIndex(of: "/") else { return true }
            end = outer
        }
        return true
    }

    /// Drops what was evaluated for the fields of a removed instance.
    mutating func forget(_ prefix: String) {
        let inside = prefix + "/"
        hidden = hidden.filter { !$0.hasPrefix(inside) }
        computed = computed.filter { !$0.key.hasPrefix(inside) }
    }

    enum Affected {
        case all
        case instances(Set<String>)
    }

    /// Evaluates the relevance and calculation of `id` in each instance at `prefixes`; returns the keys that changed
    /// (none unless `reporting`: a state being built has no use for them).
    @discardableResult
    mutating func evaluate(_ id: String, in prefixes: [String], reporting: Bool = true) -> Set<String> {
        let relevant = logic.relevant[id]
        let calculation = logic.calculation[id]
        guard relevant != nil || calculation != nil, let field = logic.fields.byID[id] else { return [] }
        var changed = Set<String>()
        // What the expressions give in an instance where none of the fields they read holds a value: the same
        // in every such instance (`FormLogic.instanceInputs`), so evaluated in the first one only.
        let inputs = logic.instanceInputs[id]
        var blankShown: Bool?
        var blankValue: AnswerValue??
        for prefix in prefixes {
            let key = AnswerKey.key(id, in: prefix)
            let blank = inputs.map { holdsNoValue($0, in: prefix) } ?? false
            // Evaluated before anything changes, so the scope's copy of this state is gone when the sets are
            // updated (otherwise each update would copy them whole).
            if let relevant {
                let shown: Bool
                if blank, let known = blankShown {
                    shown = known
                } else {
                    shown = read { $0.evaluate(relevant, key: key, prefix: prefix) }.isTruthy
                    if blank { blankShown = shown }
                }
                if shown ? hidden.remove(key) != nil : hidden.insert(key).inserted {
                    if reporting { changed.insert(key) }
                    shapeRevision &+= 1
                }
            }
            if let calculation {
                let value: AnswerValue?
                if !isRelevant(key) {
                    value = nil
                } else if logic.kept.contains(id), let stored = answers[key], !stored.isBlank {
                    value = stored  // computed once already and kept
                } else if blank, let known = blankValue {
                    value = known
                } else {
                    value = read { $0.evaluate(calculation, key: key, prefix: prefix) }.answer(for: field.kind)
                    if blank { blankValue = .some(value) }
                }
                if computed[key] != value {
                    computed[key] = value
                    if reporting { changed.insert(key) }
                }
            }
        }
        return changed
    }

    /// Whether none of `fields` holds a value (typed or computed) in the instance at `prefix`.
    func holdsNoValue(_ fields: [String], in prefix: String) -> Bool {
        for field in fields {
            let key = AnswerKey.key(field, in: prefix)
            if answers[key] != nil || (!computed.isEmpty && computed[key] != nil) { return false }
        }
        return true
    }

    /// Runs `body` on a copy of this state that is released when it returns.
    func read<T>(_ body: (FormState) -> T) -> T { body(self) }

    func evaluate(_ expression: FormExpression, key: String, prefix: String) -> ExpressionValue {
        expression.evaluate(in: Scope(state: self, prefix: prefix, current: ExpressionValue(answers[key])))
    }
}

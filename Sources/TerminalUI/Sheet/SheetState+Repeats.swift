import FormModel

/// One line block of a sheet's current step: a field (top level or inside a repeat instance), a repeat's
/// heading, an instance's heading with its Remove button, or a repeat's Add button. Rows inside instances
/// are indented by `depth`.
public enum SheetRow: Sendable, Hashable {
    /// The field `id` at `key` (`site`, `defects/<id>/severity`), and whether it takes the focus. The row names
    /// its field rather than holding a copy of its definition (``SheetState/definition(id:)`` looks it up
    /// where a row is drawn): a step of 5,000 repeat instances has 30,000 rows.
    case field(key: String, id: String, editable: Bool, depth: Int)
    /// A repeat's label and how many instances it has.
    case repeatHeading(field: FieldDefinition, count: Int, depth: Int)
    /// An instance's heading ("Defect 2"), with Remove.
    case instance(prefix: String, title: String, depth: Int)
    /// The button that adds an instance to `group` inside `parent` ("" at the top level).
    case add(group: String, parent: String, noun: String, depth: Int)

    /// What the row's control is, when it can hold the focus.
    public var focus: SheetFocus? {
        switch self {
        case let .field(key, _, editable, _): return editable ? .field(key) : nil
        case .repeatHeading: return nil
        case let .instance(prefix, _, _): return .removeInstance(prefix)
        case let .add(group, parent, _, _): return .addInstance(group: group, parent: parent)
        }
    }

    /// Whether the row belongs to the instance above it at the same depth (a field, a nested repeat's
    /// heading), rather than starting the next instance or being the group's Add button.
    var isInstanceContent: Bool {
        switch self {
        case .field, .repeatHeading: return true
        case .instance, .add: return false
        }
    }

    public var depth: Int {
        switch self {
        case let .field(_, _, _, depth), let .repeatHeading(_, _, depth), let .instance(_, _, depth), let .add(_, _, _, depth): return depth
        }
    }
}

/// The question asked before an instance that holds answers is removed. Keep is the default, and what
/// Esc means: the safe choice.
public struct InstanceRemoval: Sendable, Hashable {
    /// The instance's key prefix.
    public var prefix: String
    /// "Remove Defect 2?"
    public var title: String
    public var message: String
    /// The buttons, in order: the destructive Remove, then Keep.
    public var choices: [String] { [removeLabel, "Keep"] }
    public var removeLabel: String
    /// Keep.
    public static let defaultIndex = 1
}

extension SheetState {
    /// Builds ``visibleRows``: the step's shown fields, and inside each repeat its live instances with
    /// their fields (nested repeats too) and an Add button while there is room for another.
    func buildVisibleRows() -> [SheetRow] {
        var rows: [SheetRow] = []
        appendRows(form.pages[page].fields, prefix: "", depth: 0, to: &rows)
        return rows
    }

    private func appendRows(_ fields: [FieldDefinition], prefix: String, depth: Int, to rows: inout [SheetRow]) {
        for field in fields where field.kind != .calculate {
            let key = AnswerKey.key(field.id, in: prefix)
            guard evaluated.isRelevant(key) else { continue }
            guard field.kind == .repeat else {
                rows.append(.field(key: key, id: field.id, editable: field.isEditable, depth: depth))
                continue
            }
            let instances = evaluated.instances.live(field.id, in: prefix)
            // Room for every instance's title and fields at once: 5,000 instances make 30,000 rows, which are
            // not copied over and over as the list grows.
            rows.reserveCapacity(rows.count + instances.count * (1 + (field.fields?.count ?? 0)) + 2)
            rows.append(.repeatHeading(field: field, count: instances.count, depth: depth))
            for (index, instance) in instances.enumerated() {
                rows.append(.instance(prefix: instance.prefix, title: "\(evaluated.text(field.instanceNoun, at: instance.prefix + "/" + AnswerKey.position)) \(index + 1)", depth: depth + 1))
                appendRows(field.fields ?? [], prefix: instance.prefix, depth: depth + 1, to: &rows)
            }
            if field.maxCount.map({ instances.count < $0 }) ?? true {
                rows.append(.add(group: field.id, parent: prefix, noun: evaluated.text(field.instanceNoun, at: AnswerKey.key(field.id, in: prefix)), depth: depth + 1))
            }
        }
    }

    /// The field definition an answer key belongs to (`defects/<id>/severity` → severity).
    public func definition(ofKey key: String) -> FieldDefinition? {
        relevance.logic.fields.definition(ofKey: key)
    }

    /// The definition of the field `id` (any depth), as a ``SheetRow/field(key:id:editable:depth:)`` names it.
    public func definition(id: String) -> FieldDefinition? {
        relevance.logic.fields.byID[id]
    }

    /// The choices offered at `key`: the field's, narrowed by its `choiceFilter`. A single choice over an entity
    /// list offers the first ``entityMatches`` entities whose label contains what was typed into it
    /// (``entitySearch``), the chosen one first when the search does not find it; a multiple choice over one offers
    /// every ticked entity first, then the first ``entityMatches`` others that match: a list of 100,000 is
    /// searched, never listed.
    public func choices(at key: String) -> [Choice] {
        guard let field = definition(ofKey: key), let list = field.choicesFrom?.entityList else {
            return evaluated.choices(for: key)
        }
        if field.kind == .multipleChoice {
            let ticked = ticked(at: key)
            var offered = ticked.map { id in evaluated.entities?.entity(id, in: list)?.choice ?? Choice(value: id, label: LocalizedText(id)) }
            let tickedSet = Set(ticked)
            // Enough matches that the ticked ones among them leave `entityMatches` others.
            let matches = evaluated.entityChoices(for: key, matching: entitySearch[key] ?? "", limit: Self.entityMatches + ticked.count)
            offered += matches.lazy.filter { !tickedSet.contains($0.id) }.prefix(Self.entityMatches).map(\.choice)
            return offered
        }
        guard field.kind == .singleChoice else { return evaluated.choices(for: key) }
        var matches = evaluated.entityChoices(for: key, matching: entitySearch[key] ?? "", limit: Self.entityMatches).map(\.choice)
        if case .choice(let chosen)? = answers[key], !matches.contains(where: { $0.value == chosen }),
           let entity = evaluated.entities?.entity(chosen, in: list) {
            matches.insert(entity.choice, at: 0)
        }
        return matches
    }

    /// Remove on an instance: at once when it holds nothing typed, else after asking.
    mutating func requestRemoval(of prefix: String) -> [SheetIntent] {
        guard evaluated.instanceHasContent(prefix) else { return [.removeInstance(prefix)] }
        let title = visibleRows.lazy.compactMap { row -> String? in
            if case let .instance(candidate, title, _) = row, candidate == prefix { return title }
            return nil
        }.first ?? "this entry"
        removal = InstanceRemoval(
            prefix: prefix, title: "Remove \(title)?",
            message: "\(title) holds answers. Removing it takes them out of this record.", removeLabel: "Remove \(title)")
        confirmationSelection = InstanceRemoval.defaultIndex
        return []
    }

    mutating func handleRemoval(_ event: InputEvent) -> [SheetIntent] {
        guard let removal else { return [] }
        switch event {
        case .down, .tab, .right, .up, .backTab, .left: confirmationSelection = 1 - confirmationSelection
        case .enter, .character(" "):
            self.removal = nil
            return confirmationSelection == 0 ? [.removeInstance(removal.prefix)] : []
        case .escape: self.removal = nil
        case .control("c"):
            self.removal = nil
            return [.dismiss(.interrupt)]
        default: break
        }
        return []
    }

    /// Chooses a button of the removal question (a click).
    public mutating func chooseRemoval(_ index: Int) -> [SheetIntent] {
        confirmationSelection = index
        return handleRemoval(.enter)
    }

    /// After an instance was added (at `prefix`): its first answerable field takes the focus.
    public mutating func focusFirstField(in prefix: String) {
        let inside = prefix + "/"
        if let target = visibleRows.lazy.compactMap(\.focus).first(where: { if case .field(let key) = $0 { return key.hasPrefix(inside) } else { return false } }) {
            focus = target
        }
    }
}

extension Array where Element == SheetRow {
    /// The index of the row nearest `start` that meets `matches`, looking both ways (the focus is usually
    /// near where the sheet is scrolled, so a step of 30,000 rows is not searched from its top).
    func nearestIndex(from start: Int, where matches: (SheetRow) -> Bool) -> Int? {
        var distance = 0
        while start - distance >= 0 || start + distance < count {
            if start + distance < count, matches(self[start + distance]) { return start + distance }
            if distance > 0, start - distance >= 0, start - distance < count, matches(self[start - distance]) { return start - distance }
            distance += 1
        }
        return nil
    }
}

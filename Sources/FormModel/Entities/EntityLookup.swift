import Foundation

/// One entity of a list as a form reads it: its id, its label and its properties' values.
public struct EntityRow: Sendable, Hashable {
    /// The entity's id (a UUID, lowercased): what a choice field over the list stores.
    public var id: String
    /// The entity's label; its id when it has none.
    public var label: String
    /// The values of its properties, by property name.
    public var properties: [String: AnswerValue]

    /// An entity with `id`, `label` and `properties`.
    public init(id: String, label: String, properties: [String: AnswerValue] = [:]) {
        self.id = id
        self.label = label
        self.properties = properties
    }

    /// What an expression reads as the entity's `property`: `name` the id, `label` the label, else the
    /// property's value (null when the entity has none).
    public func value(of property: String) -> ExpressionValue {
        switch property {
        case "name": return .string(id)
        case "label": return .string(label)
        default: return ExpressionValue(properties[property])
        }
    }

    /// The entity as a choice of a field whose choices come from its list: the id stored, the label shown, the
    /// properties as text for a `choiceFilter`'s `choice.<property>`.
    public var choice: Choice {
        Choice(value: id, label: LocalizedText(label), properties: properties.isEmpty ? nil : properties.mapValues { $0.display() })
    }
}

/// Where a form's state reads entity lists from: the device's store of the lists it syncs (DraftStore). A
/// `FormState` without one reads no entity: `entity(…)` is null, a choice field over a list offers nothing
/// and accepts any id.
///
/// Reads are synchronous (an expression is evaluated synchronously) and must be cheap for one entity; a
/// list's entities are visited one by one, so a search can stop after the first matches.
public protocol EntityLookup: Sendable {
    /// The entity `id` of `list` as a form reads it, or nil when the list holds no such entity.
    func entity(_ id: String, in list: String) -> EntityRow?
    /// Visits the entities of `list` whose label contains `text` (ignoring case; every entity for empty text)
    /// in label order, as long as `visit` returns true. An implementation should skip the others without
    /// reading their properties: a search over 100,000 entities runs at every keystroke.
    func forEachEntity(in list: String, labelContaining text: String, _ visit: (EntityRow) -> Bool)
}

extension EntityLookup {
    /// Visits every entity of `list` in label order, as long as `visit` returns true.
    public func forEachEntity(in list: String, _ visit: (EntityRow) -> Bool) {
        forEachEntity(in: list, labelContaining: "", visit)
    }
}

extension EntityRow {
    /// Whether the label contains `text`, ignoring case (always for empty text): the search of
    /// `EntityLookup.forEachEntity(in:labelContaining:_:)`.
    public func labelContains(_ text: String) -> Bool {
        text.isEmpty || label.range(of: text, options: [.caseInsensitive]) != nil
    }
}

extension FormDefinition {
    /// The entity lists this form uses: the one it saves to, every `choicesFrom` list and every list an
    /// `entity(…)` expression names.
    public var entityListsUsed: Set<String> {
        var lists = Set<String>()
        if let entity { lists.insert(entity.list) }
        var sources: [String] = entity?.expressions.map(\.source) ?? []
        for field in everyField {
            if let list = field.choicesFrom?.entityList { lists.insert(list) }
            sources += [field.relevant, field.calculation, field.constraint, field.choiceFilter, field.defaultExpression, field.requiredExpression].compactMap { $0 }
        }
        for source in sources {
            guard source.contains("entity"), let expression = try? FormExpression.parse(source) else { continue }
            expression.visit { node in
                if case .entity(let list, _, _) = node { lists.insert(list) }
            }
        }
        return lists
    }
}

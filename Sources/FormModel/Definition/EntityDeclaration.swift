/// What a form declares about the entity list it saves to (the households, sites or patients a team visits again
/// and again): which list, when a record creates an entity and when it updates one, which entity it updates, the
/// entity's label, and (on the fields, `FieldDefinition.saveTo`) which answer saves to which property.
///
/// XLSForm's `entities` sheet (`list_name`, `label`, `create_if`, `update_if`, `entity_id`) imports as this.
/// The form side only: applying it when a record is submitted belongs to the device and the server (see
/// docs/entity-lists.md). What the declaration means follows ODK's rules:
///
/// | `entityId` | `createIf` | `updateIf` | a submitted record |
/// |---|---|---|---|
/// | — | — | — | creates an entity |
/// | — | set | — | creates one while `createIf` holds |
/// | set | — | — | updates the entity `entityId` names |
/// | set | — | set | updates it while `updateIf` holds |
/// | set | set | set | creates while `createIf` holds, updates while `updateIf` holds |
/// | — | any | set | refused: an update needs the entity's id |
/// | set | set | — | refused: with an id, `createIf` needs `updateIf` beside it |
public struct EntityDeclaration: Codable, Sendable, Hashable {
    /// The entity list the form saves to (`households`).
    public var list: String
    /// The entity's label, as an expression over the form's answers (`concat(head_name, ' ', village)`); needed
    /// when the form only creates entities (no `entityId`). Without it an updated entity keeps its label, and an
    /// entity an upsert creates is labelled by its id (pyxform needs no label there either).
    public var label: String?
    /// While this expression holds, a submitted record creates an entity; with neither `createIf` nor `entityId`,
    /// every record creates one.
    public var createIf: String?
    /// While this expression holds, a submitted record updates the entity `entityId` names; with `entityId` and no
    /// `updateIf`, every record updates it.
    public var updateIf: String?
    /// The id of the entity a record updates, as an expression: usually the field where the person chose it
    /// (`household`, a choice field whose `choicesFrom` is this list). A new entity's id is made where the record
    /// is, as a UUID.
    public var entityID: String?

    /// A declaration saving to `list`; without `entityId` it creates entities.
    public init(list: String, label: String? = nil, createIf: String? = nil, updateIf: String? = nil, entityID: String? = nil) {
        self.list = list
        self.label = label
        self.createIf = createIf
        self.updateIf = updateIf
        self.entityID = entityID
    }

    /// Whether a record of the form may create an entity: it names no entity to update, or has a `createIf`.
    public var creates: Bool { entityID == nil || createIf != nil }

    /// Whether a record of the form may update an entity: it names one (`entityId`).
    public var updates: Bool { entityID != nil }

    /// The expressions of the declaration with their JSON keys, in the order the loader checks them.
    public var expressions: [(key: String, source: String)] {
        [("label", label), ("createIf", createIf), ("updateIf", updateIf), ("entityId", entityID)].compactMap { key, source in source.map { (key, $0) } }
    }

    /// Property names an entity keeps itself: its id (`name`, as ODK calls it) and its `label`; no field saves to
    /// them (compared without regard to case), nor to a name starting `__`, kept for the system's own.
    public static let reservedProperties: Set<String> = ["name", "label"]

    /// Why `property` cannot be saved to, or nil when it can.
    public static func propertyProblem(_ property: String) -> String? {
        if reservedProperties.contains(property.lowercased()) {
            return "\"\(property)\" is the entity's own \(property.lowercased() == "name" ? "id" : "label"), not a property a field saves to"
        }
        if property.hasPrefix("__") { return "a property name starting with __ is kept for the system's own" }
        return nil
    }
}

/// Where a choice field's choices come from when it does not list them itself (`choices`).
public struct ChoiceSource: Codable, Sendable, Hashable {
    /// The entity list whose entities are the choices: each entity's id is the stored value, its label the
    /// choice's label, and its properties what a `choiceFilter` reads as `choice.<property>` (XLSForm's
    /// `select_one_from_file households.csv`).
    public var entityList: String

    /// Choices from the entity list `entityList`.
    public init(entityList: String) {
        self.entityList = entityList
    }
}

/// One version of one form: what a record, a mutation or a stored definition names.
public struct FormKey: Hashable, Sendable, CustomStringConvertible {
    /// The form's id (`follow-up-job`).
    public var id: String
    /// The version of the form's definition.
    public var version: Int

    /// The key of version `version` of the form `id`.
    public init(id: String, version: Int) {
        self.id = id
        self.version = version
    }

    /// The key as people read it: `follow-up-job v3`.
    public var description: String { "\(id) v\(version)" }
}

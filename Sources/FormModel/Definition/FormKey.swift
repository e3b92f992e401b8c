/// One version of one form: what a record, a mutation or a stored definition names.
public struct FormKey: Hashable, Sendable, CustomStringConvertible {
    public var id: String
    public var version: Int

    public init(id: String, version: Int) {
        self.id = id
        self.version = version
    }

    public var description: String { "\(id) v\(version)" }
}

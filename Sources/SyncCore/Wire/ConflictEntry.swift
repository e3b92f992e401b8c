import FormModel

/// One entry of the conflict log: both sides of a field that two writers changed, and who won.
///
/// Every losing value is logged, whichever policy decided; `manual` leaves the entry open for a person.
public struct ConflictEntry: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable {
        /// Both sides changed the field since their common base.
        case field
        /// A record deleted on the server was edited on a device and has been restored; with a `fieldId` of the
        /// form `defects/<id>/@removed`, the same for one repeat instance.
        case restoredAfterDelete
    }

    public enum Winner: String, Codable, Sendable {
        case server
        case client
    }

    public var kind: Kind
    /// The field, for `field` entries.
    public var fieldId: String?
    public var policy: ConflictPolicy
    public var winner: Winner
    /// Whether a person still has to decide (`manual` policy).
    public var open: Bool
    /// The server's side before the merge.
    public var server: FieldState?
    /// The device's side.
    public var client: FieldState?

    public init(kind: Kind = .field, fieldId: String?, policy: ConflictPolicy, winner: Winner, open: Bool = false, server: FieldState?, client: FieldState?) {
        self.kind = kind
        self.fieldId = fieldId
        self.policy = policy
        self.winner = winner
        self.open = open
        self.server = server
        self.client = client
    }

    /// The value that did not end up in the record.
    public var losingValue: AnswerValue? {
        winner == .server ? client?.value : server?.value
    }
}

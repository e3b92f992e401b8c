import FormModel

extension DeviceSync {
    /// What a device still has to tell the server about one record.
    public struct PendingWork: Sendable, Hashable {
        /// Unsent field edits (outbox `create` or `set` rows).
        public var edits: Bool
        /// An unsent submit or delete (outbox `submit` or `delete` rows).
        public var stateChange: Bool
        /// A mutation frozen and sent whose outcome has not arrived yet.
        public var inFlight: Bool

        public init(edits: Bool = false, stateChange: Bool = false, inFlight: Bool = false) {
            self.edits = edits
            self.stateChange = stateChange
            self.inFlight = inFlight
        }

        /// Nothing pending: the pulled record replaces the device's entirely.
        public static let none = PendingWork()

        public var isEmpty: Bool { !edits && !stateChange && !inFlight }
    }

    /// How a pulled version of a record is rebased under what the device still has to send.
    ///
    /// The pulled fields always become the record's synced fields (the sync base) and the pulled revision
    /// its server revision. On top of them:
    /// - unsent or unacknowledged edits stay (the next push, or the awaited outcome, settles them);
    /// - a record with an unsent submit or delete keeps its local state, and so does a record deleted
    ///   elsewhere that has unsent edits: their push restores it (the server logs the restoration);
    /// - a record with anything unsent keeps the form version its edits were made on.
    public struct PullRebase: Sendable, Hashable {
        public var keepsLocalState: Bool
        public var keepsLocalFormVersion: Bool
        public var keepsLocalEdits: Bool

        /// The record's state after the pull, given the state it had on the device.
        public func state(local: RecordState, pulled: RecordState) -> RecordState {
            keepsLocalState ? local : pulled
        }
    }

    /// The rule for a pulled record the device already holds at an older revision (a record at the same
    /// or an older revision than the device's is not applied at all; see ``isNewer(pulledRevision:than:)``).
    public static func rebase(pulledState: RecordState, under pending: PendingWork) -> PullRebase {
        PullRebase(
            keepsLocalState: pending.stateChange || (pulledState == .deleted && pending.edits),
            keepsLocalFormVersion: pending.edits || pending.stateChange,
            keepsLocalEdits: !pending.isEmpty)
    }

    /// Whether a pulled revision is news to a device that holds `serverRevision`.
    public static func isNewer(pulledRevision: Int64, than serverRevision: Int64) -> Bool {
        pulledRevision > serverRevision
    }
}

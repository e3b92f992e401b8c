/// One record as the home screen lists it: what the one summary query gives, and a headline once it is known.
public struct RecordListItem: Sendable, Hashable {
    /// Where a record stands, as the list shows it.
    public enum State: String, Sendable, Hashable, CaseIterable {
        case draft = "Draft"
        case queued = "Waiting to sync"
        case submitted = "Submitted"
        case conflict = "In conflict"
        /// The office sent it back (has issues, or rejected): fix it and complete it again.
        case needsChanges = "Needs changes"

        /// The list's marker for the state.
        public var marker: String {
            switch self {
            case .draft: return "✎"
            case .queued: return "↑"
            case .submitted: return "✓"
            case .conflict: return "!"
            case .needsChanges: return "⚑"
            }
        }
    }

    public var id: String
    public var formTitle: String
    /// A line that tells records apart (the first answered text field); empty until it is loaded.
    public var headline: String
    public var state: State

    public init(id: String, formTitle: String, headline: String, state: State) {
        self.id = id
        self.formTitle = formTitle
        self.headline = headline
        self.state = state
    }
}

/// One record as the home screen lists it.
public struct RecordListItem: Sendable, Hashable {
    /// Where a record stands, as the list shows it.
    public enum State: String, Sendable, Hashable {
        case draft = "Draft"
        case queued = "Waiting to sync"
        case submitted = "Submitted"
        case conflict = "In conflict"

        /// The list's marker for the state.
        public var marker: String {
            switch self {
            case .draft: return "✎"
            case .queued: return "↑"
            case .submitted: return "✓"
            case .conflict: return "!"
            }
        }
    }

    public var id: String
    public var formTitle: String
    /// A line that tells records apart (the first answered text field, say).
    public var headline: String
    public var state: State
    /// Label and shown value of each answered field, for the detail pane.
    public var details: [(label: String, value: String)]

    public init(id: String, formTitle: String, headline: String, state: State, details: [(label: String, value: String)] = []) {
        self.id = id
        self.formTitle = formTitle
        self.headline = headline
        self.state = state
        self.details = details
    }

    public static func == (lhs: RecordListItem, rhs: RecordListItem) -> Bool {
        lhs.id == rhs.id && lhs.formTitle == rhs.formTitle && lhs.headline == rhs.headline && lhs.state == rhs.state
            && lhs.details.map(\.label) == rhs.details.map(\.label) && lhs.details.map(\.value) == rhs.details.map(\.value)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(state)
    }
}

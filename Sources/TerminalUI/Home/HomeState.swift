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

/// The home screen: the records, the selection, and the status line.
public struct HomeState: Sendable, Hashable {
    public var records: [RecordListItem]
    public var selection: Int
    /// The status line ("Offline · 3 changes queued").
    public var status: String
    /// States shown by the filter; all when empty.
    public var shownStates: Set<RecordListItem.State>

    public init(records: [RecordListItem] = [], selection: Int = 0, status: String = "Offline · nothing waiting to sync", shownStates: Set<RecordListItem.State> = []) {
        self.records = records
        self.selection = selection
        self.status = status
        self.shownStates = shownStates
    }

    /// The records the filter lets through.
    public var visibleRecords: [RecordListItem] {
        shownStates.isEmpty ? records : records.filter { shownStates.contains($0.state) }
    }

    /// The selected record, if any.
    public var selected: RecordListItem? {
        let visible = visibleRecords
        return visible.indices.contains(selection) ? visible[selection] : nil
    }

    /// Moves the selection, staying within the list.
    public mutating func moveSelection(by step: Int) {
        let count = visibleRecords.count
        guard count > 0 else { return }
        selection = min(max(0, selection + step), count - 1)
    }
}

/// The home screen: the records, the selection, the filter and search, and the status line.
public struct HomeState: Sendable, Hashable {
    public var records: [RecordListItem] {
        didSet { refilter() }
    }
    public var selection: Int
    /// The standing status ("Synced 2 min ago · 3 records waiting to sync").
    public var status: String
    /// A short notice shown before the status ("Draft saved."); the app lets it expire.
    public var notice: String?
    /// States shown by the filter; all when empty.
    public var shownStates: Set<RecordListItem.State> {
        didSet { refilter() }
    }
    /// The search text while `/` is active or a search is applied; nil when there is none.
    public var search: String?
    /// Whether the search line has the keyboard (typing edits it).
    public var isEditingSearch = false
    /// Ids of the records whose title or values contain the search text; nil when not searching.
    public var searchMatches: Set<String>? {
        didSet { refilter() }
    }
    /// The selected record's label and value of each answered field, for the detail pane (loaded for it alone).
    public var selectedDetails: [(label: String, value: String)] = []
    /// The records the filter and the search let through, in list order.
    public private(set) var visibleRecords: [RecordListItem] = []

    public init(records: [RecordListItem] = [], selection: Int = 0, status: String = "Offline · nothing waiting to sync", shownStates: Set<RecordListItem.State> = []) {
        self.records = records
        self.selection = selection
        self.status = status
        self.shownStates = shownStates
        refilter()
    }

    public static func == (lhs: HomeState, rhs: HomeState) -> Bool {
        lhs.records == rhs.records && lhs.selection == rhs.selection && lhs.status == rhs.status && lhs.notice == rhs.notice
            && lhs.shownStates == rhs.shownStates && lhs.search == rhs.search && lhs.searchMatches == rhs.searchMatches
            && lhs.isEditingSearch == rhs.isEditingSearch
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(records.count)
        hasher.combine(selection)
    }

    private mutating func refilter() {
        if shownStates.isEmpty, searchMatches == nil {
            visibleRecords = records
        } else {
            visibleRecords = records.filter { (shownStates.isEmpty || shownStates.contains($0.state)) && (searchMatches?.contains($0.id) ?? true) }
        }
    }

    /// Whether the filter hides some states.
    public var isFiltered: Bool { !shownStates.isEmpty }

    /// The selected record, if any.
    public var selected: RecordListItem? {
        visibleRecords.indices.contains(selection) ? visibleRecords[selection] : nil
    }

    /// Moves the selection, staying within the list.
    public mutating func moveSelection(by step: Int) {
        let count = visibleRecords.count
        guard count > 0 else {
            selection = 0
            return
        }
        selection = min(max(0, selection + step), count - 1)
    }

    /// The status line as shown: the notice, then the standing status.
    public var statusLine: String {
        guard let notice, !notice.isEmpty else { return status }
        return notice + " · " + status
    }
}

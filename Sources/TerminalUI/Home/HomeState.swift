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

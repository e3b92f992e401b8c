import FormModel

/// Where the home screen's parts sit: a split view (list and detail panes) on a regular-width
/// terminal, the list alone on a compact one; a status line and a key-hint bar at the bottom.
public struct HomeLayout: Sendable, Hashable {
    public let size: TerminalSize
    public let sizeClass: SizeClass
    /// The list pane, with its header row holding New and Filter.
    public let listPane: Rect
    /// The detail pane; nil in compact width.
    public let detailPane: Rect?
    /// The New control in the list header.
    public let newControl: Rect
    /// The Filter control in the list header.
    public let filterControl: Rect
    public let statusLine: Rect
    public let keyHints: Rect

    public init(size: TerminalSize) {
        self.size = size
        self.sizeClass = SizeClass.forTerminal(columns: size.columns)
        let body = max(0, size.rows - 2)
        let listWidth = sizeClass == .regular ? max(30, size.columns * 2 / 5) : size.columns
        listPane = Rect(x: 0, y: 0, width: listWidth, height: body)
        detailPane = sizeClass == .regular ? Rect(x: listWidth, y: 0, width: size.columns - listWidth, height: body) : nil
        filterControl = Rect(x: listWidth - 10, y: 1, width: 8, height: 1)
        newControl = Rect(x: listWidth - 18, y: 1, width: 7, height: 1)
        statusLine = Rect(x: 0, y: body, width: size.columns, height: 1)
        keyHints = Rect(x: 0, y: body + 1, width: size.columns, height: 1)
    }

    /// The rectangle of a pane named in a form's `pane` ("list" or "detail").
    public func pane(named name: String?) -> Rect {
        name == "detail" ? (detailPane ?? listPane) : listPane
    }

    /// The control a popover's `anchor` names (`new` or `filter`; anything else anchors at Filter).
    public func control(named name: String?) -> Rect {
        name == "new" ? newControl : filterControl
    }
}

import FormModel

/// Where a presentation sits on the terminal, and where a popover's arrow points.
public struct PresentationFrame: Sendable, Hashable {
    /// The sheet's own rectangle.
    public var rect: Rect
    /// The part of the screen that is dimmed behind it (empty when nothing is dimmed).
    public var dimmed: [Rect]
    /// For a popover: the cell of the arrow and whether it points up (popover below its control).
    public var arrow: (column: Int, row: Int, pointsUp: Bool)?

    public static func == (lhs: PresentationFrame, rhs: PresentationFrame) -> Bool {
        lhs.rect == rhs.rect && lhs.dimmed == rhs.dimmed && lhs.arrow?.column == rhs.arrow?.column
            && lhs.arrow?.row == rhs.arrow?.row && lhs.arrow?.pointsUp == rhs.arrow?.pointsUp
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(rect)
        hasher.combine(dimmed)
    }

    /// Form sheets are 540×620 pt; a cell is about twice as tall as it is wide, so 60 columns
    /// make a box 60 × (60 × 620 / 540 / 2) ≈ 34 rows.
    public static let formSheetColumns = 60
    /// Page sheets are 768 pt wide against the form sheet's 540: 85 columns.
    public static let pageSheetColumns = 85
    /// Popovers stay small.
    public static let popoverColumns = 40

    /// Lays out `presentation` on the home screen `home`.
    /// - Parameters:
    ///   - contentRows: rows the content needs (popovers are only as tall as their content).
    ///   - anchor: the control a popover points at.
    ///   - pane: the pane a current-context presentation covers.
    public init(_ presentation: ResolvedPresentation, home: HomeLayout, contentRows: Int, anchor: Rect? = nil, pane: Rect? = nil) {
        let size = home.size
        let screen = Rect(x: 0, y: 0, width: size.columns, height: size.rows)
        arrow = nil
        switch presentation.style {
        case .fullScreen:
            rect = screen
            dimmed = []
        case .formSheet:
            let width = min(Self.formSheetColumns, size.columns - 4)
            let height = min(size.rows - 2, Int((Double(width) * 620 / 540 / 2).rounded()))
            rect = Rect(x: (size.columns - width) / 2, y: (size.rows - height) / 2, width: width, height: height)
            dimmed = [screen]
        case .pageSheet:
            let width = min(Self.pageSheetColumns, size.columns - 8)
            rect = Rect(x: (size.columns - width) / 2, y: 0, width: width, height: size.rows)
            dimmed = [Rect(x: 0, y: 0, width: rect.x, height: size.rows), Rect(x: rect.maxX, y: 0, width: size.columns - rect.maxX, height: size.rows)]
        case .sheet:
            // Compact width's card: the top edge of what lies behind stays visible, dimmed.
            rect = Rect(x: 0, y: 2, width: size.columns, height: size.rows - 2)
            dimmed = [Rect(x: 0, y: 0, width: size.columns, height: 2)]
        case .currentContext:
            rect = pane ?? home.listPane
            dimmed = []
        case .popover:
            let control = anchor ?? home.filterControl
            let width = min(Self.popoverColumns, size.columns - 2)
            let height = min(contentRows + 4, size.rows - 4)
            let x = min(max(0, control.midX - width / 2), size.columns - width)
            let below = control.maxY + height <= size.rows
            let y = below ? control.maxY : max(0, control.y - height)
            rect = Rect(x: x, y: y, width: width, height: height)
            arrow = (column: control.midX, row: below ? y : rect.maxY - 1, pointsUp: below)
            dimmed = []
        }
    }
}

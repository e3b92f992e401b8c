/// The horizontal size class of the display a sheet is presented on.
public enum SizeClass: String, Sendable, Hashable, CaseIterable {
    /// A narrow display (a phone, a terminal under 100 columns): form and page sheets go full screen, popovers become
    /// sheets.
    case compact
    /// A wide display: each style is shown as it asks.
    case regular

    /// Terminals narrower than this many columns are compact: a 540 pt form sheet in proportion
    /// is 60 columns wide, and below 100 columns it would leave too little of the home screen to
    /// read around it, so sheets go full screen there (an 80×24 terminal is compact).
    public static let compactWidthThreshold = 100

    /// The size class of a terminal `columns` wide.
    public static func forTerminal(columns: Int) -> SizeClass {
        columns < compactWidthThreshold ? .compact : .regular
    }
}

/// How a form's sheet is presented, as the platform guidelines name the modal styles.
public enum PresentationStyle: String, Codable, Sendable, CaseIterable {
    /// The default: a form sheet on a wide display, full screen on a narrow one.
    case automatic
    /// A centred box in proportion to 540×620 pt over a dimmed backdrop; for structured information.
    case formSheet
    /// A fixed-width column at full height with the sides dimmed.
    case pageSheet
    /// Covers everything; for complex or immersive tasks.
    case fullScreen
    /// A small nonmodal box with an arrow pointing at the control that opened it; for quick tasks.
    case popover
    /// Covers only the pane of a split view it was opened from.
    case currentContext
}

/// How a sheet appears and leaves.
public enum TransitionStyle: String, Codable, Sendable, CaseIterable {
    /// Slides up from the bottom and back down; the default for sheets.
    case coverVertical
    /// Fades in and out; what popovers do.
    case crossDissolve
    /// Flips horizontally to reveal the sheet.
    case flipHorizontal
    /// Curls a corner of the current view up.
    case partialCurl
}

extension PresentationStyle {
    /// The transition a form of this style gets when it does not name one.
    public var defaultTransition: TransitionStyle {
        self == .popover ? .crossDissolve : .coverVertical
    }
}

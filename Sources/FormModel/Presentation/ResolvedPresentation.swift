/// What a presentation style becomes on a display of a given size class.
public enum AdaptedStyle: String, Sendable, Hashable {
    /// A centred box over a dimmed backdrop.
    case formSheet
    /// A fixed-width column, full height, sides dimmed.
    case pageSheet
    /// Covers everything.
    case fullScreen
    /// A small nonmodal box with an arrow at its anchor.
    case popover
    /// Covers one pane of the split view.
    case currentContext
    /// Compact width's card: full width, the top edge of what lies behind still visible and dimmed.
    case sheet
}

/// How one form is shown: the adapted style and the behaviour that follows from it.
public struct ResolvedPresentation: Sendable, Hashable {
    /// The style the form asks for.
    public var requested: PresentationStyle
    /// The size class of the display it is shown on.
    public var sizeClass: SizeClass
    /// The style it is shown in on that display.
    public var style: AdaptedStyle
    /// How it appears and leaves; a popover shown as a sheet slides up instead of fading.
    public var transition: TransitionStyle

    /// Adapts `style` to `sizeClass` following the adaptation table (README, "Presentation and dismissal"):
    /// compact width turns form and page sheets into full screen, popovers and current-context into sheets.
    public init(style: PresentationStyle, sizeClass: SizeClass, transition: TransitionStyle? = nil) {
        self.requested = style
        self.sizeClass = sizeClass
        switch (style, sizeClass) {
        case (.automatic, .regular), (.formSheet, .regular): self.style = .formSheet
        case (.pageSheet, .regular): self.style = .pageSheet
        case (.popover, .regular): self.style = .popover
        case (.currentContext, .regular): self.style = .currentContext
        case (.fullScreen, _): self.style = .fullScreen
        case (.automatic, .compact), (.formSheet, .compact), (.pageSheet, .compact): self.style = .fullScreen
        case (.popover, .compact), (.currentContext, .compact): self.style = .sheet
        }
        // A popover adapted to a sheet moves like a sheet.
        let declared = transition ?? style.defaultTransition
        self.transition = self.style != .popover && declared == .crossDissolve && style == .popover ? .coverVertical : declared
    }

    /// How `form` is shown on a display of `sizeClass`.
    public init(form: FormDefinition, sizeClass: SizeClass) {
        self.init(style: form.presentation, sizeClass: sizeClass, transition: form.transition)
    }

    /// Whether what lies behind is dimmed.
    public var dimsBackground: Bool {
        switch style {
        case .formSheet, .pageSheet, .sheet: return true
        case .fullScreen, .popover, .currentContext: return false
        }
    }

    /// Whether the presentation is modal: nothing behind it reacts.
    public var isModal: Bool { style != .popover }

    /// Whether a click or tap outside it dismisses it (keeping what was typed).
    public var dismissesOnOutsideTap: Bool {
        switch style {
        case .popover, .formSheet, .pageSheet, .sheet: return true
        case .fullScreen, .currentContext: return false
        }
    }

    /// Whether it shows an arrow at the control that opened it.
    public var hasArrow: Bool { style == .popover }

    /// Whether it covers the whole display.
    public var coversEverything: Bool { style == .fullScreen }

    /// A one-line account for people ("form sheet: centred box, home dimmed, slides up").
    public var summary: String {
        let shape: String
        switch style {
        case .formSheet: shape = "form sheet: centred box over the dimmed home screen, nothing behind reacts"
        case .pageSheet: shape = "page sheet: fixed-width column at full height, sides dimmed"
        case .fullScreen: shape = "full screen: covers everything"
        case .popover: shape = "popover: small box with an arrow at its control, nonmodal, a click outside closes it and saves"
        case .currentContext: shape = "current context: covers only its pane of the split view"
        case .sheet: shape = "sheet: full width with the top edge of the screen behind still visible, dimmed"
        }
        let motion = transition == .crossDissolve ? "fades in" : transition == .coverVertical ? "slides up from the bottom" : transition.rawValue
        return "\(shape); \(motion)"
    }
}

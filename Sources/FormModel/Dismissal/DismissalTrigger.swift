/// Every way a presentation can end.
public enum DismissalTrigger: String, Codable, Sendable, Hashable, CaseIterable {
    /// The completion button ("Create", "Add", "Submit").
    case complete
    /// The explicit Cancel button: the only way anything is discarded.
    case cancel
    /// Esc, the terminal's equivalent of swiping a sheet down.
    case escape
    /// A click or tap on the dimmed backdrop or outside a popover.
    case outsideTap
    /// Another popover was opened, closing this one.
    case anotherPopover
    /// A modal sheet was opened from this popover, closing it first.
    case modalFromPopover
    /// Ctrl-C.
    case interrupt
    /// SIGTERM.
    case terminate
    /// SIGHUP: the terminal was closed.
    case hangup
    /// The process was killed; noticed on the next start.
    case processKilled
    /// Line mode reached the end of its input.
    case endOfInput

    /// Whether this trigger keeps everything typed (every trigger but `complete` and `cancel`).
    public var keepsEverything: Bool { self != .complete && self != .cancel }

    /// How the trigger reads in messages ("Esc", "a click outside").
    public var phrase: String {
        switch self {
        case .complete: return "completion"
        case .cancel: return "Cancel"
        case .escape: return "Esc"
        case .outsideTap: return "a click outside"
        case .anotherPopover: return "opening another popover"
        case .modalFromPopover: return "opening a sheet from the popover"
        case .interrupt: return "Ctrl-C"
        case .terminate: return "SIGTERM"
        case .hangup: return "the terminal closing"
        case .processKilled: return "the app being stopped"
        case .endOfInput: return "the end of input"
        }
    }
}

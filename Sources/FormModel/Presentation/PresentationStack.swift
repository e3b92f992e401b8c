/// What kind of thing is on screen in the presentation stack.
public enum PresentedKind: Sendable, Hashable {
    /// A modal sheet in its adapted style (form sheet, page sheet, full screen, current context, sheet).
    case modal(AdaptedStyle)
    /// A nonmodal popover.
    case popover
    /// A confirmation action sheet (Discard Changes / Save Draft / Keep Editing).
    case actionSheet
    /// An alert: the only thing allowed over a popover.
    case alert
}

/// One entry of the presentation stack.
public struct PresentedItem: Sendable, Hashable {
    /// Names what is presented (a form's id, or an alert); unique on the stack.
    public var id: String
    /// How it is presented.
    public var kind: PresentedKind

    /// An item of this kind.
    public init(id: String, kind: PresentedKind) {
        self.id = id
        self.kind = kind
    }

    /// The item a resolved presentation of a form puts on the stack.
    public init(id: String, presentation: ResolvedPresentation) {
        self.id = id
        self.kind = presentation.style == .popover ? .popover : .modal(presentation.style)
    }
}

/// What the stack did, in order, so the caller can save and animate accordingly.
public enum StackEvent: Sendable, Hashable {
    /// The item was put on top, possibly as another kind than asked (a confirmation over a popover becomes an alert).
    case presented(PresentedItem)
    /// Closed by the stack's rules or by a dismissal; what it held is kept (never discarded here).
    case dismissed(PresentedItem, DismissalTrigger)
}

/// Why the stack refused a presentation.
public struct PresentationRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why, and what must happen first.
    public var description: String
}

/// The stack of what is presented, enforcing the guidelines:
/// one popover at a time ("If you need to show a new popover, close the open one first");
/// a modal opened from a popover closes the popover first; only an alert may appear over a popover
/// ("Except for an alert, nothing should be displayed on top of a popover"), so a confirmation asked
/// from a popover is shown as an alert; and an alert must be answered before anything else appears.
public struct PresentationStack: Sendable, Hashable {
    /// What is presented, bottom first.
    public private(set) var items: [PresentedItem] = []

    /// An empty stack: nothing is presented over the home screen.
    public init() {}

    /// The topmost item.
    public var top: PresentedItem? { items.last }

    /// Whether a popover is showing.
    public var hasPopover: Bool { items.contains { $0.kind == .popover } }

    /// Presents `item`, first closing (and saving) what the rules say must close.
    /// Returns the events in order; the last is the presentation (possibly of an adapted kind).
    public mutating func present(_ item: PresentedItem) throws(PresentationRefusal) -> [StackEvent] {
        if top?.kind == .alert {
            throw PresentationRefusal(description: "An alert is showing; answer it before presenting \(item.id).")
        }
        if items.contains(where: { $0.id == item.id }) {
            throw PresentationRefusal(description: "\(item.id) is already presented.")
        }
        var events: [StackEvent] = []
        var item = item
        if let popoverIndex = items.lastIndex(where: { $0.kind == .popover }) {
            switch item.kind {
            case .popover:
                events += close(from: popoverIndex, trigger: .anotherPopover)
            case .modal:
                events += close(from: popoverIndex, trigger: .modalFromPopover)
            case .actionSheet:
                item.kind = .alert
            case .alert:
                break
            }
        }
        items.append(item)
        events.append(.presented(item))
        return events
    }

    /// Dismisses the topmost item for `trigger`.
    @discardableResult
    public mutating func dismissTop(_ trigger: DismissalTrigger) -> [StackEvent] {
        guard !items.isEmpty else { return [] }
        return close(from: items.count - 1, trigger: trigger)
    }

    /// A click or tap outside the topmost item: a popover or a dimmed sheet is dismissed (kept);
    /// full screen, current context, alerts and action sheets ignore it.
    public mutating func tapOutside() -> [StackEvent] {
        guard let top else { return [] }
        switch top.kind {
        case .popover, .modal(.formSheet), .modal(.pageSheet), .modal(.sheet):
            return dismissTop(.outsideTap)
        default:
            return []
        }
    }

    private mutating func close(from index: Int, trigger: DismissalTrigger) -> [StackEvent] {
        let closing = items[index...].reversed()
        items.removeSubrange(index...)
        return closing.map { StackEvent.dismissed($0, trigger) }
    }
}

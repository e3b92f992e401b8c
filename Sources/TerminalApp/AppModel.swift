import DraftStore
import Foundation
import FormModel
import SyncClient
import SyncCore
import TerminalUI

/// What the app does after handling an event.
public enum AppStep: Sendable, Equatable {
    /// Keep going; redraw.
    case redraw
    /// Start a sync in the background (the runner reports its progress).
    case sync
    /// Quit with this exit status (the terminal is given back first).
    case exit(Int32)
}

/// What is presented over the home screen.
enum Presented {
    /// A record's form sheet, backed by its `FormSession`.
    case record(FormSession, SheetState)
    /// One of the app's own popovers (New, Filter).
    case utility(SheetState)

    var sheet: SheetState {
        switch self {
        case .record(_, let sheet), .utility(let sheet): return sheet
        }
    }
}

/// The full-screen app's state and behaviour: the home screen, the presented sheet and its session,
/// and the alert for deleting a draft. Events go in, a screen comes out; every edit is made durable
/// (awaited) before the next event is handled.
public actor AppModel {
    let store: DraftStore
    var home = HomeState()
    var presented: Presented?
    var stack = PresentationStack()
    /// The draft waiting for a delete confirmation, with the selected button (0 Delete, 1 Keep).
    var pendingDelete: (id: UUID, selection: Int)?
    var size: TerminalSize
    /// When the app was opened on one form (`fieldsheet fill FORM` on a terminal), it ends with that sheet.
    let singleSheet: Bool
    /// A form chosen in the New popover, started once the popover has closed.
    var pendingStart: String?
    /// The conflicts sheet's choices, carried out once it has closed.
    var pendingResolution: SheetState?
    /// The filter as it was when the Filter popover opened; its Cancel puts it back.
    var filterBeforeOpening: Set<RecordListItem.State>?
    /// The keys box, when `?` (or F1 in a sheet) asked for it.
    var help: HelpView.Context?
    /// The sync engine when the device is logged in.
    var syncEngine: SyncEngine?
    /// Whether a sync is running.
    var syncing = false
    /// Syncs by itself when attached (the runner attaches one when the device is logged in).
    var syncService: SyncService?
    /// When the last sync finished well, and why the last one failed (nil after a good one).
    var lastSynced: Date?
    var lastSyncFailure: String?
    /// Unsent records and records in conflict, from the last list query.
    var waitingRecords = 0
    /// Attachments attached here that the server may still lack, for the status line.
    var waitingUploads = WaitingUploads.none
    var conflictedRecords = 0
    /// When the notice in the status line goes away.
    var noticeExpires: Date?
    /// The list's summaries by id, headlines already read (by when the record last changed), and the search index.
    var summaries: [String: RecordListSummary] = [:]
    var headlines: [String: (updatedAt: Date, text: String)] = [:]
    var searchIndex: [String: (updatedAt: Date, text: [UInt8])] = [:]
    /// Reads values into the search index in the background.
    var indexing: Task<Void, Never>?
    /// Whether the list is observed (``observedRecords()``): then the app's own actions read nothing by hand.
    var followingList = false
    /// A record to select once the list shows it (the record whose sheet just closed).
    var selectWhenListed: String?
    /// Whose details the detail pane shows, as of when, and in the device's language as it was set then.
    var detailsShown: (id: String, updatedAt: Date, review: RecordReview?, language: String?)?
    /// The selected record as the headlines last read it, for its details (``loadDetails()``) not to read it again.
    var recentlyRead: StoredRecord?
    /// Counts the times a closing sheet dropped a record's cached headline: a read of the store that began
    /// before a drop may hold the record as it was before the sheet's last edits, and is not cached.
    var headlineDrops = 0
    /// Counts presentations, so the runner knows when a new sheet should play its transition.
    public internal(set) var presentations = 0
    /// Counts dismissals; `closing` holds the sheet that went away, for its closing transition.
    public internal(set) var dismissals = 0
    var closing: SheetState?

    /// How long a notice stays in the status line.
    static let noticeLifetime: TimeInterval = 6

    /// The exit statuses of a single-sheet run, as `fieldsheet fill` documents them.
    public enum FillOutcomeCode: Int32, Sendable {
        case submitted = 0
        case kept = 3
        case discarded = 4
    }

    public init(store: DraftStore, size: TerminalSize, singleSheet: Bool = false) {
        self.store = store
        self.size = size
        self.singleSheet = singleSheet
    }

    /// The screen for the current state; `appearance` is the presented sheet's transition progress.
    /// - Parameter closing: how far the last dismissed sheet has gone (0 just closed, 1 gone), to draw
    ///   its closing transition; nil draws the current state.
    public func render(appearance: Double = 1, closing progress: Double? = nil) -> Screen {
        var screen: Screen
        if let progress, let closing {
            screen = AppScreen.render(home: home, sheet: closing, size: size, appearance: 1 - progress).screen
        } else {
            let rendered = AppScreen.render(home: home, sheet: presented?.sheet, size: size, appearance: appearance)
            screen = rendered.screen
            if var sheet = presented?.sheet, let view = rendered.sheet, view.scroll != sheet.scroll {
                sheet.scroll = view.scroll
                update(sheet)
            }
        }
        if let pendingDelete { drawDeleteAlert(selection: pendingDelete.selection, on: &screen) }
        if let help { HelpView.draw(help, on: &screen) }
        return screen
    }

    /// Moves the presented sheet's focus to `target` (as a click on it would).
    func moveFocus(_ target: SheetFocus) {
        guard var sheet = presented?.sheet else { return }
        sheet.focus(on: target)
        update(sheet)
    }

    /// Replaces the presented sheet's state, keeping what backs it.
    func update(_ sheet: SheetState) {
        switch presented {
        case .record(let session, _)?: presented = .record(session, sheet)
        case .utility?: presented = .utility(sheet)
        case nil: break
        }
    }

    /// Whether a sheet is presented and how it moves in, for the runner's transition.
    public var presentedTransition: TransitionStyle? {
        guard let sheet = presented?.sheet else { return nil }
        return ResolvedPresentation(form: sheet.form, sizeClass: SizeClass.forTerminal(columns: size.columns)).transition
    }

    /// How the last dismissed sheet moves out (slides down, fades out), for the runner's closing transition.
    public var closingTransition: TransitionStyle? {
        guard let closing else { return nil }
        return ResolvedPresentation(form: closing.form, sizeClass: SizeClass.forTerminal(columns: size.columns)).transition
    }

    /// The closing transition has been drawn.
    public func closingDone() {
        closing = nil
    }

    /// The terminal changed size: everything re-adapts on the next draw; focus and input are kept.
    public func resize(_ newSize: TerminalSize) async {
        size = newSize
        await refreshVisible()
    }

    /// Handles one input event.
    public func handle(_ event: InputEvent) async -> AppStep {
        let step: AppStep
        if help != nil {
            // Any key closes the keys box; Ctrl-C still quits (keeping everything).
            help = nil
            if event == .control("c") { step = presented == nil ? .exit(130) : await handleSheet(event) } else { step = .redraw }
        } else if pendingDelete != nil {
            step = await handleDeleteAlert(event)
        } else if presented != nil {
            step = await handleSheet(event)
        } else {
            step = await handleHome(event)
        }
        if let choices = pendingResolution {
            pendingResolution = nil
            await resolveConflicts(choices)
        }
        if let formID = pendingStart {
            // A modal opened from a popover: the popover has closed first.
            pendingStart = nil
            do {
                try await startNew(formID: formID)
            } catch {
                say("\(error)")
            }
        }
        await refreshVisible()
        return step
    }

    /// A signal asked the app to stop: the sheet is dismissed keeping everything, then the app exits.
    public func stop(_ trigger: DismissalTrigger, status: Int32) async -> AppStep {
        if case .record(let session, _)? = presented {
            try? await session.dismiss(reason: trigger)
        }
        presented = nil
        return .exit(status)
    }

    /// Shows `notice` in the status line for a few seconds.
    func say(_ notice: String) {
        home.notice = notice
        noticeExpires = Date().addingTimeInterval(Self.noticeLifetime)
    }

    /// Time passed: expires the notice and refreshes "synced 2 min ago". Returns whether the screen changed.
    public func tick(now: Date = Date()) -> Bool {
        let before = home
        if let noticeExpires, now >= noticeExpires {
            home.notice = nil
            self.noticeExpires = nil
        }
        // While a sync runs the status line shows its progress.
        if !syncing { home.status = statusText(now: now) }
        return home != before
    }

    func drawDeleteAlert(selection: Int, on screen: inout Screen) {
        let width = min(46, size.columns - 2)
        let box = Rect(x: (size.columns - width) / 2, y: (size.rows - 7) / 2, width: width, height: 7)
        screen.clear(box)
        screen.box(box)
        screen.write("Delete this draft?", column: box.x + 2, row: box.y + 1, style: .bold)
        screen.write("Everything typed in it is removed.", column: box.x + 2, row: box.y + 2, limit: width - 4)
        screen.write(" Delete Draft ", column: box.x + 6, row: box.y + 4, style: selection == 0 ? [.destructive, .reverse, .bold] : [.destructive, .bold])
        screen.write(" Keep ", column: box.x + width - 18, row: box.y + 4, style: selection == 1 ? .reverse : [])
    }
}

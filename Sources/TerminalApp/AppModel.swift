import DraftStore
import Foundation
import FormModel
import SyncClient
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
    var recordIDs: [UUID] = []
    /// When the app was opened on one form (`fieldsheet fill FORM` on a terminal), it ends with that sheet.
    let singleSheet: Bool
    /// A form chosen in the New popover, started once the popover has closed.
    var pendingStart: String?
    /// The conflicts sheet's choices, carried out once it has closed.
    var pendingResolution: SheetState?
    /// The sync engine when the device is logged in.
    var syncEngine: SyncEngine?
    /// Whether a sync is running.
    var syncing = false
    /// Counts presentations, so the runner knows when a new sheet should play its transition.
    public internal(set) var presentations = 0

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
    public func render(appearance: Double = 1) -> Screen {
        var screen = AppScreen.render(home: home, sheet: presented?.sheet, size: size, appearance: appearance).screen
        if let pendingDelete { drawDeleteAlert(selection: pendingDelete.selection, on: &screen) }
        return screen
    }

    /// Moves the presented sheet's focus to `target` (as a click on it would).
    func moveFocus(_ target: SheetFocus) {
        guard var sheet = presented?.sheet else { return }
        sheet.focus(on: target)
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

    /// The terminal changed size: everything re-adapts on the next draw; focus and input are kept.
    public func resize(_ newSize: TerminalSize) {
        size = newSize
    }

    /// Loads the record list from the device database.
    public func reload() async {
        do {
            let summaries = try await store.records()
            var items: [RecordListItem] = []
            var ids: [UUID] = []
            var waiting = 0
            let inConflict = Set(((try? await store.conflicts(openOnly: true)) ?? []).map(\.recordID))
            for summary in summaries {
                let queued = try await store.outboxCount(record: summary.id) > 0
                if queued { waiting += 1 }
                let state: RecordListItem.State = inConflict.contains(summary.id) ? .conflict
                    : summary.state == .draft ? .draft : (queued ? .queued : .submitted)
                var headline = ""
                var details: [(label: String, value: String)] = []
                if let record = try await store.record(summary.id), let form = try? await store.form(id: summary.formID, version: summary.formVersion) {
                    for field in form.allFields {
                        guard let value = record.answers[field.id] else { continue }
                        let shown = value.display(for: field)
                        if headline.isEmpty, field.kind == .text || field.kind == .multilineText { headline = shown }
                        details.append((field.label, shown))
                    }
                }
                items.append(RecordListItem(id: summary.id.uuidString.lowercased(), formTitle: summary.formTitle, headline: headline, state: state, details: details))
                ids.append(summary.id)
            }
            home.records = items
            recordIDs = ids
            home.moveSelection(by: 0)
            home.status = (syncEngine == nil ? "Not logged in · " : "") + (waiting == 0 ? "nothing waiting to sync" : "\(waiting) record\(waiting == 1 ? "" : "s") waiting to sync")
                + (inConflict.isEmpty ? "" : " · \(inConflict.count) in conflict (c to resolve)")
        } catch {
            home.status = "Cannot read the records: \(error)"
        }
    }

    /// Handles one input event.
    public func handle(_ event: InputEvent) async -> AppStep {
        let step: AppStep
        if pendingDelete != nil {
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
            // A modal opened from a popover: the stack closes the popover first.
            pendingStart = nil
            do {
                try await startNew(formID: formID)
            } catch {
                home.status = "\(error)"
            }
        }
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

    func drawDeleteAlert(selection: Int, on screen: inout Screen) {
        let width = 46
        let box = Rect(x: (size.columns - width) / 2, y: (size.rows - 7) / 2, width: width, height: 7)
        screen.clear(box)
        screen.box(box)
        screen.write("Delete this draft?", column: box.x + 2, row: box.y + 1, style: .bold)
        screen.write("Everything typed in it is removed.", column: box.x + 2, row: box.y + 2)
        screen.write(" Delete Draft ", column: box.x + 6, row: box.y + 4, style: selection == 0 ? [.destructive, .reverse, .bold] : [.destructive, .bold])
        screen.write(" Keep ", column: box.x + 28, row: box.y + 4, style: selection == 1 ? .reverse : [])
    }
}

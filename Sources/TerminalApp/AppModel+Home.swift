import DraftStore
import Foundation
import FormModel
import SyncCore
import TerminalUI

extension AppModel {
    func handleHome(_ event: InputEvent) async -> AppStep {
        if home.isEditingSearch { return await handleSearch(event) }
        switch event {
        case .character("q"), .character("Q"): return .exit(0)
        case .control("c"): return .exit(130)
        case .character("?"), .function(1): help = .home
        case .up, .character("k"): home.moveSelection(by: -1)
        case .down, .character("j"): home.moveSelection(by: 1)
        case .pageUp: home.moveSelection(by: -max(1, HomeLayout(size: size).listPane.height - 5))
        case .pageDown: home.moveSelection(by: max(1, HomeLayout(size: size).listPane.height - 5))
        case .home: home.selection = 0
        case .end: home.moveSelection(by: home.visibleRecords.count)
        case .character("/"): startSearch()
        case .escape where home.search != nil: clearSearch()
        case .character("n"), .character("N"): await openNewPopover()
        case .character("f"), .character("F"): openFilterPopover()
        case .character("s"), .character("S"):
            guard syncEngine != nil else {
                say("Not logged in: run `fieldsheet login URL --project P` first, then press s to sync.")
                return .redraw
            }
            return .sync
        case .character("c"), .character("C"): await openConflicts()
        case .enter: await openSelected()
        case .character("d"), .character("D"):
            if let id = selectedID, home.selected?.state == .draft {
                pendingDelete = (id, 1)
            } else {
                say(home.selected == nil ? "No record is selected." : "Only drafts can be deleted.")
            }
        case .mouse(let mouse) where mouse.action == .press:
            let layout = HomeLayout(size: size)
            if layout.newControl.contains(column: mouse.column, row: mouse.row) {
                await openNewPopover()
            } else if layout.filterControl.contains(column: mouse.column, row: mouse.row) {
                openFilterPopover()
            } else if layout.listPane.contains(column: mouse.column, row: mouse.row), mouse.row >= layout.listPane.y + 3 {
                let row = HomeView.window(home, layout: layout).lowerBound + mouse.row - (layout.listPane.y + 3)
                if row < home.visibleRecords.count { home.selection = row }
            }
        case .mouse(let mouse) where mouse.action == .scrollUp || mouse.action == .scrollDown:
            home.moveSelection(by: mouse.action == .scrollUp ? -3 : 3)
        default:
            break
        }
        return .redraw
    }

    /// The selected record's id.
    var selectedID: UUID? {
        home.selected.flatMap { UUID(text: $0.id) }
    }

    func openNewPopover() async {
        let forms = (try? await store.forms()) ?? []
        let definition = BuiltInSheets.new(forms: forms.map { ($0.id, $0.title) })
        var sheet = SheetState(form: definition, answers: [:])
        sheet.keyHints = "Digit or ↑↓ Enter starts · Esc closes · F1 keys"
        present(.utility(sheet), id: BuiltInSheets.newID)
    }

    func openFilterPopover() {
        let all = RecordListItem.State.allCases
        let shown = all.filter { home.shownStates.isEmpty || home.shownStates.contains($0) }.map(Self.name(of:))
        filterBeforeOpening = home.shownStates
        var sheet = SheetState(form: BuiltInSheets.filter, answers: ["show": .choices(shown)])
        sheet.keyHints = "Applies at once · Esc keeps · Cancel undoes"
        present(.utility(sheet), id: BuiltInSheets.filterID)
    }

    static func name(of state: RecordListItem.State) -> String {
        switch state {
        case .draft: return "draft"
        case .queued: return "queued"
        case .conflict: return "conflict"
        case .needsChanges: return "needsChanges"
        case .submitted: return "submitted"
        }
    }

    static func state(named name: String) -> RecordListItem.State {
        switch name {
        case "draft": return .draft
        case "queued": return .queued
        case "conflict": return .conflict
        case "needsChanges": return .needsChanges
        default: return .submitted
        }
    }

    /// Resumes the selected draft, or opens the selected submission for editing when its form allows.
    func openSelected() async {
        guard let id = selectedID else { return }
        do {
            try await openRecord(id)
        } catch {
            say("\(error)")
        }
    }

    /// Starts a new record of `formID` in its sheet.
    public func startNew(formID: String) async throws {
        await open(try await store.newRecord(formID: formID))
    }

    /// Opens an existing record: a draft resumes, a submission is edited.
    ///
    /// Whether it is a draft and what the office said come from the list's summary: the record's answers are
    /// read once, by the session (a record of 5,000 repeat instances holds 10,000 of them). A record the list
    /// does not know yet, or whose state changed since the list was read, is read first.
    public func openRecord(_ id: UUID) async throws {
        if let summary = summaries[id.lowercased] {
            do {
                return await open(try await openSession(id, submitted: summary.state == .submitted), review: summary.review)
            } catch let error as DraftStoreError where error.code == .notADraft || error.code == .notEditable {
                // Submitted or reopened since the list was read: the record says which.
            }
        }
        let record = try await store.record(id)
        await open(try await openSession(id, submitted: record?.state == .submitted), review: record?.review)
    }

    /// A session on an existing record: a submitted one is edited, a draft resumed.
    private func openSession(_ id: UUID, submitted: Bool) async throws -> FormSession {
        submitted ? try await store.editSubmitted(id) : try await store.resumeDraft(id)
    }

    /// Presents the sheet of an already opened session (`fieldsheet fill FORM` on a terminal).
    public func present(session: FormSession) async {
        await open(session)
    }

    /// Presents a session's sheet. A record the office sent back opens to be fixed: titled and labelled for
    /// that, with the reviewer's comment at the top. The sheet starts from the session's evaluated answers.
    func open(_ session: FormSession, review: RecordReview? = nil) async {
        var sheet = SheetState(evaluated: await session.state)
        if let review, review.state.needsChanges {
            sheet.title = "Fix and Resubmit"
            sheet.completionLabel = "Resubmit"
            sheet.note = ("The office sent this back (\(review.state.words))" + (review.comment == nil ? "." : ":"), review.comment ?? "")
        }
        // A draft moved to a newer version of its form as it opened: the answers not carried over, shown this once.
        if let move = session.versionMove, !move.dropped.isEmpty {
            let heading = "Moved to version \(move.to) of the form. These answers are not in it (the record's history keeps them):"
            let answers = move.dropped.map { "\($0.label): \($0.display)" }.joined(separator: "; ")
            sheet.note = sheet.note.map { ($0.heading, $0.text + " — " + heading + " " + answers) } ?? (heading, answers)
        }
        present(.record(session, sheet), id: session.recordID.uuidString)
    }

    /// Presents through the stack, so a modal opened from a popover closes the popover first and a
    /// second popover replaces the first (its choices already applied).
    func present(_ item: Presented, id: String) {
        let presentation = ResolvedPresentation(form: item.sheet.form, sizeClass: SizeClass.forTerminal(columns: size.columns))
        // Whatever the stack closed on the way was a popover of the app's own, whose choices already apply.
        do {
            _ = try stack.present(PresentedItem(id: id, presentation: presentation))
            presented = item
            presentations += 1
        } catch {
            say("Cannot open \(item.sheet.form.title): \(error)")
        }
    }

    func handleDeleteAlert(_ event: InputEvent) async -> AppStep {
        guard let pending = pendingDelete else { return .redraw }
        switch event {
        case .left, .right, .tab, .backTab: pendingDelete = (pending.id, 1 - pending.selection)
        case .escape: pendingDelete = nil
        case .enter, .character(" "):
            pendingDelete = nil
            if pending.selection == 0 {
                do {
                    try await store.deleteDraft(pending.id)
                    say("Draft deleted.")
                } catch {
                    say("\(error)")
                }
                await refreshList()
            }
        case .control("c"): return .exit(130)
        default: break
        }
        return .redraw
    }
}

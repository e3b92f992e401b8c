import DraftStore
import Foundation
import FormModel
import TerminalUI

extension AppModel {
    func handleSheet(_ event: InputEvent) async -> AppStep {
        guard var sheet = presented?.sheet else { return .redraw }
        var intents: [SheetIntent]
        if event == .function(1) || (event == .character("?") && !sheet.focusTakesText && !sheet.isAsking) {
            help = .sheet
            return .redraw
        }
        if event == .function(2), case .record(let session, _)? = presented, sheet.form.languages.count > 1 {
            return await switchLanguage(sheet, session: session)
        }
        if case .mouse(let mouse) = event {
            guard mouse.action == .press else { return .redraw }
            intents = click(mouse, on: &sheet)
            let presentation = ResolvedPresentation(form: sheet.form, sizeClass: SizeClass.forTerminal(columns: size.columns))
            if intents == [.dismiss(.outsideTap)], presentation.style == .popover, let control = homeControl(at: mouse) {
                // A nonmodal popover: "let users close one popover and open another with a single tap".
                // Behind a modal sheet nothing reacts; a click there only dismisses it.
                let step = await perform(intents, sheet: sheet)
                if control == "new" { await openNewPopover() } else { openFilterPopover() }
                return step
            }
        } else if event == .tab, let typed = sheet.typedAttachPath {
            // Tab in a file field with a path typed completes the path, as a shell does.
            let completion = PathCompletion.complete(typed.path)
            sheet.replaceAttachPath(typed.key, with: completion.path)
            sheet.notice = completion.notice
            update(sheet)
            return .redraw
        } else if sheet.form.id == BuiltInSheets.newID, event == .enter, case .choice(let chosen)? = sheet.answers["form"], chosen != "-" {
            // Enter on the highlighted form starts it.
            intents = [.complete]
        } else {
            var event = event
            if sheet.form.id == BuiltInSheets.newID, sheet.focus == .field("form") {
                // In the chooser ↑↓ move through the forms (Tab still moves to the buttons).
                if event == .down { event = .right } else if event == .up { event = .left }
            }
            intents = handle(event, in: &sheet)
            if sheet.form.id == BuiltInSheets.newID, !Self.picks(event) {
                // Arrows and Space move through the forms; a digit, a click or Enter starts one.
                intents = intents.filter { if case .set = $0 { return false } else { return true } }
                presented = .utility(sheet)
                if intents.isEmpty { return .redraw }
            }
        }
        return await perform(intents, sheet: sheet)
    }

    /// F2: the sheet in the form's next language, and the device's language from now on; what is typed and
    /// every answer stay as they are.
    func switchLanguage(_ sheet: SheetState, session: FormSession) async -> AppStep {
        var sheet = sheet
        let languages = sheet.form.languages
        let current = sheet.language ?? sheet.form.defaultLanguage ?? languages[0]
        let next = languages[((languages.firstIndex(of: current) ?? 0) + 1) % languages.count]
        sheet.language = await session.setLanguage(next)
        do {
            try await store.setPreferredLanguage(next)
            sheet.notice = "In \(next) · F2 next language"
        } catch {
            sheet.notice = "In \(next) for this sheet; the device's language was not saved: \(error)"
        }
        update(sheet)
        return .redraw
    }

    /// Hands `event` to `sheet`, the presented sheet taken out: `presented` lets go of its copy meanwhile (and
    /// gets the sheet back before anything else can run), so an edit changes the sheet's answers in place
    /// instead of copying all of them (30,000 in a record of 5,000 defects) on every key.
    func handle(_ event: InputEvent, in sheet: inout SheetState) -> [SheetIntent] {
        let session: FormSession? = if case .record(let session, _)? = presented { session } else { nil }
        let wasPresented = presented != nil
        presented = nil
        let intents = sheet.handle(event)
        if wasPresented { presented = session.map { .record($0, sheet) } ?? .utility(sheet) }
        return intents
    }

    /// Whether a key picks an option outright (a digit), rather than moving through the options.
    static func picks(_ event: InputEvent) -> Bool {
        if case .character(let character) = event { return character.isNumber }
        return false
    }

    /// A click: on the confirmation's buttons, on an option or another control of the sheet, or outside it.
    func click(_ mouse: MouseEvent, on sheet: inout SheetState) -> [SheetIntent] {
        // Lay the screen out as it stands, so the click meets the controls the person sees.
        guard let view = AppScreen.render(home: home, sheet: sheet, size: size).sheet else { return [] }
        if sheet.confirmation != nil {
            return view.confirmationChoice(column: mouse.column, row: mouse.row).map { [.confirm($0)] } ?? []
        }
        if sheet.removal != nil {
            return view.dialogChoice(column: mouse.column, row: mouse.row).map { sheet.chooseRemoval($0) } ?? []
        }
        if view.frame.rect.contains(column: mouse.column, row: mouse.row) {
            // A click on an option chooses it (a radio, a checkbox, a yes/no box).
            if let option = view.option(column: mouse.column, row: mouse.row) {
                return sheet.choose(option: option.index, of: option.field)
            }
            guard let target = view.target(column: mouse.column, row: mouse.row) else { return [] }
            sheet.focus(on: target)
            if case .field = target { return [] }
            return sheet.handle(.enter)
        }
        let presentation = ResolvedPresentation(form: sheet.form, sizeClass: SizeClass.forTerminal(columns: size.columns))
        return presentation.dismissesOnOutsideTap ? [.dismiss(.outsideTap)] : []
    }

    func homeControl(at mouse: MouseEvent) -> String? {
        let layout = HomeLayout(size: size)
        if layout.newControl.contains(column: mouse.column, row: mouse.row) { return "new" }
        if layout.filterControl.contains(column: mouse.column, row: mouse.row) { return "filter" }
        return nil
    }

    /// Carries out the sheet's intents in order; each edit is durable before the next intent or key.
    func perform(_ intents: [SheetIntent], sheet: SheetState) async -> AppStep {
        var sheet = sheet
        guard let current = presented else { return .redraw }
        switch current {
        case .utility:
            return performUtility(intents, sheet: &sheet)
        case .record(let session, _):
            var step = AppStep.redraw
            for intent in intents {
                do {
                    switch intent {
                    case .set(let field, let value):
                        try await session.set(field, to: value)
                    case let .attach(field, path):
                        let expanded = (path as NSString).expandingTildeInPath
                        sheet.notice = "Attaching \((expanded as NSString).lastPathComponent)…"
                        let issues = try await session.attach(field, file: expanded)
                        let value = await session.answers[field]
                        sheet.stored(field, value)
                        if case .attachment(let reference)? = value {
                            sheet.notice = issues.first?.message ?? "Attached \(reference.display)."
                        }
                    case .complete:
                        switch try await session.complete() {
                        case .submitted:
                            return await close(sheet, notice: "Submitted · queued for sync.", outcome: .submitted, record: session.recordID)
                        case .invalid(let report):
                            sheet.show(report)
                            let count = Set(report.issues.map(\.fieldID)).count
                            sheet.notice = "\(count) field\(count == 1 ? "" : "s") to fix before \(sheet.completionLabel)"
                        }
                    case .cancel:
                        switch try await session.cancel() {
                        case .closed:
                            return await close(sheet, notice: session.mode == .newRecord ? "Nothing typed, nothing kept." : "Nothing to discard.", outcome: .discarded, record: session.recordID)
                        case .needsConfirmation(let confirmation):
                            sheet.ask(confirmation)
                        }
                    case .confirm(let choice):
                        switch try await session.resolve(choice) {
                        case .discard?:
                            return await close(sheet, notice: session.mode == .newRecord ? "New record discarded." : "Changes discarded.", outcome: .discarded, record: session.recordID)
                        case nil:
                            sheet.dismissConfirmation()
                        default:
                            return await close(sheet, notice: "Draft saved.", outcome: .kept, record: session.recordID)
                        }
                    case let .addInstance(group, parent):
                        let prefix = try await session.addInstance(to: group, in: parent)
                        sheet.reload(await session.answers)
                        sheet.focusFirstField(in: prefix)
                    case .removeInstance(let prefix):
                        try await session.removeInstance(prefix)
                        sheet.reload(await session.answers)
                        // The focus goes to the repeat's Add button, where the removed instance was.
                        if let path = AnswerKey(prefix + "/" + AnswerKey.removed), let last = path.steps.last {
                            let parent = AnswerKey(steps: Array(path.steps.dropLast()), field: last.group).instancePrefix
                            sheet.focus(on: .addInstance(group: last.group, parent: parent))
                        }
                        sheet.notice = "Removed."
                    case .dismiss(let trigger):
                        // Only a new record can leave nothing behind; comparing every answer (30,000 in a record of
                        // 5,000 defects) is for that case alone.
                        let kept = session.mode == .newRecord ? await session.changes.hasUserContent : true
                        try await session.dismiss(reason: trigger)
                        step = await close(sheet, notice: kept ? "Draft saved." : "Nothing typed, nothing kept.", outcome: kept ? .kept : .discarded, record: session.recordID)
                        if trigger == .interrupt { return .exit(130) }
                        return step
                    }
                } catch {
                    sheet.notice = "Not saved: \(error)"
                }
            }
            presented = .record(session, sheet)
            return step
        }
    }

    /// The New, Filter and Conflicts sheets of the app's own. New starts the chosen form as soon as
    /// one is chosen (a single choice closes its popover); Filter's choices apply as they are made and
    /// are kept however it closes, except by its Cancel, which puts the filter back as it was.
    func performUtility(_ intents: [SheetIntent], sheet: inout SheetState) -> AppStep {
        let formID = sheet.form.id
        for intent in intents {
            switch intent {
            case .set(let field, let value) where formID == BuiltInSheets.filterID && field == "show":
                var states = Set<RecordListItem.State>()
                if case .choices(let names)? = value { states = Set(names.map(Self.state(named:))) }
                // Nothing ticked would hide everything; show all instead.
                home.shownStates = states.count == RecordListItem.State.allCases.count ? [] : states
                home.selection = 0
            case .set(let field, .choice(let chosen)?) where formID == BuiltInSheets.newID && field == "form" && chosen != "-":
                // "A popover should close when someone … selects an item in the popover."
                closeUtility(sheet, trigger: .modalFromPopover)
                pendingStart = chosen
                return .redraw
            case .set, .confirm, .addInstance, .removeInstance, .attach:
                break
            case .complete where formID == BuiltInSheets.newID:
                guard case .choice(let chosen)? = sheet.answers["form"], chosen != "-" else {
                    sheet.show(sheet.validator.validate(sheet.answers))
                    presented = .utility(sheet)
                    return .redraw
                }
                closeUtility(sheet, trigger: .modalFromPopover)
                pendingStart = chosen
                return .redraw
            case .complete where formID == BuiltInSheets.conflictsID:
                pendingResolution = sheet
                closeUtility(sheet, trigger: .escape)
                return .redraw
            case .cancel where formID == BuiltInSheets.filterID:
                // Cancel is the one way out that discards: the filter goes back to how it was.
                home.shownStates = filterBeforeOpening ?? home.shownStates
                home.moveSelection(by: 0)
                closeUtility(sheet, trigger: .cancel)
                return .redraw
            case .complete, .cancel:
                closeUtility(sheet, trigger: .cancel)
                return .redraw
            case .dismiss(let trigger):
                closeUtility(sheet, trigger: trigger)
                return trigger == .interrupt ? .exit(130) : .redraw
            }
        }
        presented = .utility(sheet)
        return .redraw
    }

    /// Takes one of the app's own sheets off the stack (and off the screen, with its closing transition).
    func closeUtility(_ sheet: SheetState, trigger: DismissalTrigger) {
        stack.dismissTop(trigger)
        presented = nil
        filterBeforeOpening = nil
        closing = sheet
        dismissals += 1
    }

    /// Closes the record's sheet, refreshes the list and shows a short notice; the app syncs soon after.
    func close(_ sheet: SheetState, notice: String, outcome: FillOutcomeCode, record: UUID) async -> AppStep {
        stack.dismissTop(.escape)
        presented = nil
        closing = sheet
        dismissals += 1
        // Edits made within one millisecond share the record's `updatedAt`, so a headline or details read
        // while the sheet was open can look current though later keystrokes changed the record: read them again.
        let key = record.lowercased
        headlines[key] = nil
        headlineDrops += 1
        if detailsShown?.id == key { detailsShown = nil }
        // The record just closed is the one selected, when it is still listed (now, or once the list shows it).
        selectWhenListed = key
        await refreshList()
        if let index = home.visibleRecords.firstIndex(where: { $0.id == key }) {
            home.selection = index
            selectWhenListed = nil
            if followingList {
                // refreshList read nothing (the observation brings changes), and closing may commit nothing
                // (every edit was saved as it was made), so no new list may come to read the headline dropped
                // above: read the rows on screen again now (and the details, from the same read).
                await refreshVisible()
            } else {
                await loadDetails()
            }
        } else if !followingList {
            selectWhenListed = nil
        }
        say(notice)
        localChangeClosed()
        return singleSheet ? .exit(outcome.rawValue) : .redraw
    }
}

import DraftStore
import Foundation
import FormModel
import TerminalUI

extension AppModel {
    func handleSheet(_ event: InputEvent) async -> AppStep {
        guard var sheet = presented?.sheet else { return .redraw }
        var intents: [SheetIntent]
        if case .mouse(let mouse) = event {
            guard mouse.action == .press else { return .redraw }
            intents = click(mouse, on: &sheet)
            if intents == [.dismiss(.outsideTap)], let control = homeControl(at: mouse) {
                // "Let users close one popover and open another with a single tap."
                let step = await perform(intents, sheet: sheet)
                if control == "new" { await openNewPopover() } else { openFilterPopover() }
                return step
            }
        } else {
            intents = sheet.handle(event)
        }
        return await perform(intents, sheet: sheet)
    }

    /// A click: on the confirmation's buttons, on a control of the sheet, or outside it.
    func click(_ mouse: MouseEvent, on sheet: inout SheetState) -> [SheetIntent] {
        // Lay the screen out as it stands, so the click meets the controls the person sees.
        guard let view = AppScreen.render(home: home, sheet: sheet, size: size).sheet else { return [] }
        if sheet.confirmation != nil {
            return view.confirmationChoice(column: mouse.column, row: mouse.row).map { [.confirm($0)] } ?? []
        }
        if view.frame.rect.contains(column: mouse.column, row: mouse.row) {
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
                    case .complete:
                        switch try await session.complete() {
                        case .submitted:
                            return await close(notice: "Submitted · queued for sync.", outcome: .submitted)
                        case .invalid(let report):
                            sheet.show(report)
                        }
                    case .cancel:
                        switch try await session.cancel() {
                        case .closed:
                            return await close(notice: "Nothing to discard.", outcome: .discarded)
                        case .needsConfirmation(let confirmation):
                            sheet.ask(confirmation)
                        }
                    case .confirm(let choice):
                        switch try await session.resolve(choice) {
                        case .discard?:
                            return await close(notice: "Changes discarded.", outcome: .discarded)
                        case nil:
                            sheet.dismissConfirmation()
                        default:
                            return await close(notice: "Draft saved.", outcome: .kept)
                        }
                    case .dismiss(let trigger):
                        try await session.dismiss(reason: trigger)
                        step = await close(notice: "Draft saved.", outcome: .kept)
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

    /// The New and Filter popovers: their choices act at once; closing them any way keeps what was chosen.
    func performUtility(_ intents: [SheetIntent], sheet: inout SheetState) -> AppStep {
        for intent in intents {
            switch intent {
            case .set(let field, let value) where sheet.form.id == BuiltInSheets.filterID && field == "show":
                var states = Set<RecordListItem.State>()
                if case .choices(let names)? = value { states = Set(names.map(Self.state(named:))) }
                // Nothing ticked would hide everything; show all instead.
                home.shownStates = states.count == 4 ? [] : states
                home.selection = 0
            case .set, .confirm:
                break
            case .complete where sheet.form.id == BuiltInSheets.newID:
                guard case .choice(let formID)? = sheet.answers["form"], formID != "-" else {
                    sheet.show(FormValidator(form: sheet.form).validate(sheet.answers))
                    presented = .utility(sheet)
                    return .redraw
                }
                pendingStart = formID
                return .redraw
            case .complete where sheet.form.id == BuiltInSheets.conflictsID:
                pendingResolution = sheet
                stack.dismissTop(.escape)
                presented = nil
                return .redraw
            case .complete, .cancel, .dismiss:
                stack.dismissTop(.escape)
                presented = nil
                return .redraw
            }
        }
        presented = .utility(sheet)
        return .redraw
    }

    /// Closes the record's sheet, refreshes the list and shows a short notice.
    func close(notice: String, outcome: FillOutcomeCode) async -> AppStep {
        stack.dismissTop(.escape)
        presented = nil
        await reload()
        home.status = notice + " " + home.status
        return singleSheet ? .exit(outcome.rawValue) : .redraw
    }
}

import FormModel

/// Composes what the terminal shows: the home screen, dimmed where the presented sheet's style dims it,
/// and the sheet on top. A pure function of state and size.
public enum AppScreen {
    /// Where `form` sits on a terminal of `size`.
    public static func frame(for form: FormDefinition, page: Int = 0, size: TerminalSize) -> PresentationFrame {
        let home = HomeLayout(size: size)
        let presentation = ResolvedPresentation(form: form, sizeClass: home.sizeClass)
        let shownPage = form.pages.indices.contains(page) ? form.pages[page] : form.pages.first
        return PresentationFrame(
            presentation, home: home, contentRows: SheetView.contentRows(of: shownPage),
            anchor: home.control(named: form.anchor), pane: home.pane(named: form.pane))
    }

    /// Draws the home screen and, when one is presented, the sheet; returns the sheet's view for hit-testing.
    public static func render(home: HomeState, sheet: SheetState?, size: TerminalSize) -> (screen: Screen, sheet: SheetView?) {
        let layout = HomeLayout(size: size)
        var screen = Screen(size: size)
        HomeView.draw(home, layout: layout, on: &screen)
        guard let sheet else { return (screen, nil) }
        let frame = frame(for: sheet.form, page: sheet.page, size: size)
        for rect in frame.dimmed { screen.apply(.dim, to: rect) }
        var view = SheetView(state: sheet, frame: frame)
        view.draw(on: &screen)
        return (screen, view)
    }
}

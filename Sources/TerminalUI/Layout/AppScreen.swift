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
    /// - Parameter appearance: how far the sheet's transition has come, 0 to 1: a sliding sheet rises
    ///   from the bottom edge, a fading popover is drawn dim until it arrives.
    public static func render(home: HomeState, sheet: SheetState?, size: TerminalSize, appearance: Double = 1) -> (screen: Screen, sheet: SheetView?) {
        let layout = HomeLayout(size: size)
        var screen = Screen(size: size)
        HomeView.draw(home, layout: layout, on: &screen)
        guard let sheet else { return (screen, nil) }
        var frame = frame(for: sheet.form, page: sheet.page, size: size)
        for rect in frame.dimmed { screen.apply(.dim, to: rect) }
        let progress = min(max(appearance, 0), 1)
        let presentation = ResolvedPresentation(form: sheet.form, sizeClass: layout.sizeClass)
        if progress < 1, presentation.transition == .coverVertical {
            let drop = Int((Double(size.rows - frame.rect.y) * (1 - progress)).rounded())
            frame.rect.y += drop
            frame.rect.height = max(0, min(frame.rect.height, size.rows - frame.rect.y))
        }
        var view = SheetView(state: sheet, frame: frame)
        if frame.rect.height >= 4 { view.draw(on: &screen) }
        if progress < 1, presentation.transition == .crossDissolve { screen.apply(.dim, to: frame.rect) }
        return (screen, view)
    }
}

import FormModel

/// Draws how a form is presented on an empty home screen of a given size: the split view behind,
/// dimmed where the style dims it, and the sheet with its chrome (Cancel, title, completion button,
/// "Step 1 of N") and the first page's fields.
public struct PresentationPreview: Sendable {
    public let form: FormDefinition
    public let size: TerminalSize

    public init(form: FormDefinition, size: TerminalSize) {
        self.form = form
        self.size = size
    }

    public var presentation: ResolvedPresentation {
        ResolvedPresentation(form: form, sizeClass: SizeClass.forTerminal(columns: size.columns))
    }

    /// Where the sheet sits.
    public var frame: PresentationFrame {
        AppScreen.frame(for: form, size: size)
    }

    /// The screen as drawn: an empty home screen and the sheet with the form's defaults.
    public func render() -> Screen {
        AppScreen.render(home: HomeState(), sheet: SheetState(form: form, answers: FormValidator(form: form).defaults), size: size).screen
    }
}

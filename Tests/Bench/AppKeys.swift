// Keystrokes in the full-screen app as a person meets them: the key handled, the screen drawn and diffed
// against the one drawn before (what the terminal would be sent).
import TerminalApp
import TerminalUI

/// The app with the screen it last drew; `press` times one key to the next screen.
final class AppKeys {
    let model: AppModel
    private var shown: Screen
    /// Of each key pressed so far, the time spent drawing the screen and diffing it.
    private(set) var drawing: [UInt64] = []

    init(_ model: AppModel) async {
        self.model = model
        shown = await model.render()
    }

    /// Handles `event`, draws the screen and diffs it; returns the nanoseconds from the key to the diff.
    func press(_ event: InputEvent) async -> UInt64 {
        let start = nanos()
        _ = await model.handle(event)
        let handled = nanos()
        let screen = await model.render()
        _ = ScreenDiff(from: shown, to: screen)
        shown = screen
        let end = nanos()
        drawing.append(end - handled)
        return end - start
    }

    /// Forgets the drawing times recorded so far.
    func resetDrawing() { drawing.removeAll() }
}

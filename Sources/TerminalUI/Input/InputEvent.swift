/// A key press, mouse action or paste, decoded from the bytes a terminal sends.
public enum InputEvent: Sendable, Hashable {
    case character(Character)
    case enter
    case tab
    case backTab
    case backspace
    case delete
    case escape
    case up, down, left, right
    case home, end, pageUp, pageDown
    /// A function key, F1 to F12.
    case function(Int)
    /// Ctrl plus a letter (`c` for Ctrl-C, which arrives as a byte, not a signal, in raw mode).
    case control(Character)
    case mouse(MouseEvent)
    case paste(String)
}

/// An xterm SGR mouse report (columns and rows counted from 0).
public struct MouseEvent: Sendable, Hashable {
    public enum Action: Sendable, Hashable {
        case press
        case release
        case scrollUp
        case scrollDown
        case drag
    }

    public var action: Action
    public var button: Int
    public var column: Int
    public var row: Int

    public init(action: Action, button: Int = 0, column: Int, row: Int) {
        self.action = action
        self.button = button
        self.column = column
        self.row = row
    }
}

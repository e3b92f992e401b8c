/// How a scripted fill ends its presentation.
public enum FillAction: Sendable, Hashable {
    /// `--complete`: the completion button.
    case complete
    /// `--dismiss`: Esc, keeping everything.
    case dismiss
    /// `--cancel`, with `--discard` as the confirmation when something was typed.
    case cancel(discard: Bool)
    /// No action flag: line mode, one prompt per relevant field.
    case lineMode
}

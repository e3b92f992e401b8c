/// The key-hint bar: whole hints only, as many as the width holds, most important first; Keys (`?`)
/// and Quit always shown at the end, so every other key is one press away.
public enum KeyHints {
    /// The home screen's hints in order of importance.
    public static let home = ["n New", "Enter Open", "/ Search", "f Filter", "s Sync", "c Conflicts", "d Delete", "↑↓ Move"]
    /// Always shown, last.
    public static let always = ["? Keys", "q Quit"]

    /// The hints that fit in `width` columns, two spaces apart, with a leading space.
    public static func line(_ hints: [String] = home, always: [String] = always, width: Int) -> String {
        let tail = always.joined(separator: "  ")
        var chosen: [String] = []
        var used = 1 + tail.count
        for hint in hints where used + hint.count + 2 <= width {
            chosen.append(hint)
            used += hint.count + 2
        }
        return " " + (chosen + always).joined(separator: "  ")
    }
}

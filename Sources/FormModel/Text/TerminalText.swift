/// Text written by people (answers, labels, ids, messages that echo input) made safe to show on a terminal.
///
/// A terminal acts on control characters: ESC starts sequences that can retitle the window (OSC 0), write the
/// clipboard (OSC 52) or clear the screen (CSI 2J); C1 controls such as U+009B do the same on some terminals.
/// Everything FieldSheet prints passes through `visible(_:)`, which shows each such character as a visible
/// symbol instead: C0 controls and DEL as their Unicode control pictures (ESC as `␛`), C1 and
/// bidirectional-override characters as U+FFFD `�`. One character stays one character, so layouts hold.
public enum TerminalText {
    /// Whether a terminal could act on `scalar` rather than draw it.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        // Bidirectional embeddings, overrides and isolates reorder what follows them on screen.
        case 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// The visible stand-in for a control character.
    public static func picture(of scalar: Unicode.Scalar) -> Unicode.Scalar {
        switch scalar.value {
        case 0x00...0x1F: return Unicode.Scalar(0x2400 + scalar.value)!  // ␀ … ␛ … ␟
        case 0x7F: return "\u{2421}"  // ␡
        default: return "\u{FFFD}"
        }
    }

    /// Whether `text` holds no control character (beyond those in `allowed`).
    public static func isPlain(_ text: String, allowing allowed: Set<Unicode.Scalar> = []) -> Bool {
        !text.unicodeScalars.contains { isControl($0) && !allowed.contains($0) }
    }

    /// `text` with every control character shown as a visible symbol; the characters in `allowed`
    /// (say newline for multi-line text) are kept as they are.
    public static func visible(_ text: String, allowing allowed: Set<Unicode.Scalar> = []) -> String {
        guard !isPlain(text, allowing: allowed) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            result.append(isControl(scalar) && !allowed.contains(scalar) ? picture(of: scalar) : scalar)
        }
        return String(result)
    }

    /// `text` without control characters (beyond those in `allowed`), for text that is stored rather than shown.
    public static func removingControls(_ text: String, allowing allowed: Set<Unicode.Scalar> = []) -> String {
        guard !isPlain(text, allowing: allowed) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where !isControl(scalar) || allowed.contains(scalar) {
            result.append(scalar)
        }
        return String(result)
    }
}

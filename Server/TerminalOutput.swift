import Foundation
import FormModel

// What this executable prints can hold text other people wrote (form titles, findings that quote a form,
// record values in exports): it goes through here, so control characters show as visible symbols
// (`TerminalText`; ESC as `␛`) instead of acting on the operator's terminal. This `print` shadows the
// standard library's for the whole module.

/// Writes `items` to standard output with control characters other than newline and tab made visible.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { "\($0)" }.joined(separator: separator)
    FileHandle.standardOutput.write(Data((TerminalText.visible(text, allowing: ["\n", "\t"]) + terminator).utf8))
}

/// Writes a line for the operator on standard error, with control characters other than newline and tab made visible.
func warn(_ text: String) {
    FileHandle.standardError.write(Data((TerminalText.visible(text, allowing: ["\n", "\t"]) + "\n").utf8))
}

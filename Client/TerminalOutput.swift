import ArgumentParser
import Foundation
import FormModel

// Everything this executable prints goes through here, so text other people wrote (answers, labels, form
// titles, ids and messages that echo them) never reaches the terminal with its control characters intact:
// they show as visible symbols (`TerminalText`; ESC as `␛`). This `print` shadows the standard library's
// for the whole module. Only `writeScreen` writes escape sequences, those of a `Screen` (whose cells keep no
// control characters).

/// Writes `items` to standard output with control characters other than newline and tab made visible.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { "\($0)" }.joined(separator: separator)
    FileHandle.standardOutput.write(Data((TerminalText.visible(text, allowing: ["\n", "\t"]) + terminator).utf8))
}

/// Writes a line for the person on standard error, with control characters other than newline and tab made visible.
func warn(_ text: String) {
    FileHandle.standardError.write(Data((TerminalText.visible(text, allowing: ["\n", "\t"]) + "\n").utf8))
}

/// Writes a rendered screen (ANSI text from `Screen.ansiText()`, whose only escape sequences are its own).
func writeScreen(_ ansiText: String) {
    FileHandle.standardOutput.write(Data((ansiText + "\n").utf8))
}

extension FieldSheetCommand {
    /// Runs the command like ArgumentParser's own `main`, but its messages (which can echo arguments) are
    /// written through `print` and `warn` above, and `--set`s are read in linear time (`AssignmentArguments`).
    static func main() async {
        do {
            var command = try AssignmentArguments.parse(Array(CommandLine.arguments.dropFirst()))
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if !message.isEmpty {
                if code == .success { print(message) } else { warn(message) }
            }
            Foundation.exit(code.rawValue)
        }
    }
}

import Foundation
import FormModel

/// Where a fill flow talks: results (the record id) on standard output, prompts and messages on
/// standard error, answers from standard input. Tests and other front ends supply their own.
///
/// Whatever is written shows control characters as visible symbols (`TerminalText`), whichever console it
/// goes to: prompts and messages echo labels, answers and input other people wrote.
public struct Console: Sendable {
    /// Writes a line of result (what a script captures).
    public var result: @Sendable (String) -> Void
    /// Writes text for the person (no newline is added).
    public var say: @Sendable (String) -> Void
    /// Reads one line of input without its newline; nil at end of input.
    public var readLine: @Sendable () async -> String?

    public init(result: @escaping @Sendable (String) -> Void, say: @escaping @Sendable (String) -> Void, readLine: @escaping @Sendable () async -> String?) {
        self.result = { result(TerminalText.visible($0, allowing: ["\t"])) }
        self.say = { say(TerminalText.visible($0, allowing: ["\n", "\t"])) }
        self.readLine = readLine
    }

    /// Standard output, standard error and standard input.
    public static let standard = Console(
        result: { line in
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        },
        say: { text in
            FileHandle.standardError.write(Data(text.utf8))
        },
        readLine: {
            // The wait for a person is a blocked read: on a thread of its own, so it holds none of the few
            // threads Swift's concurrency shares (a signal's dismissal, the autosave and sync need them).
            await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    let line = Swift.readLine(strippingNewline: true)
                    // Piped answers are not echoed by a terminal: echo them, so the transcript reads as typed.
                    if let line, isatty(0) == 0 { FileHandle.standardError.write(Data((TerminalText.visible(line) + "\n").utf8)) }
                    continuation.resume(returning: line)
                }
            }
        }
    )

    /// Writes a whole line for the person.
    public func line(_ text: String = "") { say(text + "\n") }
}

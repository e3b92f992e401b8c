import ArgumentParser
import Foundation
import FormModel
import TerminalUI

extension FieldSheetCommand {
    /// `fieldsheet preview FILE…`: shows how forms are presented on a wide and a narrow terminal.
    struct Preview: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show how forms would be presented on a wide and on a narrow terminal.",
            discussion: """
                Terminals narrower than \(SizeClass.compactWidthThreshold) columns are compact: form and page sheets become
                full screen, popovers and current-context sheets become sheets. Dimmed cells show as · without colour.
                """
        )

        @Argument(help: "Form definition files (.json).", completion: .file(extensions: ["json"]))
        var files: [String]

        @Option(name: .long, help: "Terminal sizes to show, as COLUMNSxROWS.")
        var size: [String] = ["120x40", "80x24"]

        @Flag(name: .long, help: "Print one line per form and size, without drawing the screen.")
        var summary = false

        func validate() throws {
            for text in size where Self.parseSize(text) == nil {
                throw ValidationError("'\(text)' is not a terminal size; write COLUMNSxROWS between 20x10 and 500x200, like 120x40.")
            }
        }

        func run() throws {
            let loader = FormLoader()
            var failed = false
            let useColour = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
            for file in files {
                let result = loader.load(contentsOf: file)
                guard let loaded = result.loaded else {
                    result.findings.forEach { print($0) }
                    failed = true
                    continue
                }
                for text in size {
                    let terminal = Self.parseSize(text)!
                    let preview = PresentationPreview(form: loaded.form, size: terminal)
                    let presentation = preview.presentation
                    print("\(loaded.form.title) (\(loaded.form.presentation.rawValue)) on \(terminal), \(presentation.sizeClass.rawValue) width → \(presentation.summary)")
                    if !summary {
                        let screen = preview.render()
                        if useColour { writeScreen(screen.ansiText()) } else { print(screen.plainText()) }
                        print("")
                    }
                }
            }
            if failed { throw ExitCode(1) }
        }

        static func parseSize(_ text: String) -> TerminalSize? {
            let parts = text.lowercased().split(separator: "x")
            guard parts.count == 2, let columns = Int(parts[0]), let rows = Int(parts[1]),
                (20...500).contains(columns), (10...200).contains(rows) else { return nil }
            return TerminalSize(columns: columns, rows: rows)
        }
    }
}

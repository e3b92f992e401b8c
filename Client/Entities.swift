import ArgumentParser
import DraftStore
import FillFlow
import FormModel
import Foundation

extension FieldSheetCommand {
    /// `fieldsheet entities [LIST] [--search TEXT] [--limit N] [--json]`.
    struct Entities: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the entities of a list on this device (the households, sites or patients forms choose from).",
            discussion: """
                The device holds the lists its forms use, as the server last sent them, with the changes of the \
                records submitted here on top (docs/entity-lists.md). Entities are printed in label order: id, \
                label and the properties (name=value; …), tab-separated; with --json, one JSON object per line. \
                Without LIST, the lists this device's forms use are printed, one per line.
                Exit status: 0 listed (also when nothing matches); 1 the list is not one this device's forms use.
                """
        )

        @OptionGroup var home: HomeOptions

        @Argument(help: "The entity list, as the forms name it.")
        var list: String?

        @Option(help: "Only entities whose label contains this text (ignoring case).")
        var search = ""

        @Option(help: "Print at most this many entities.")
        var limit: Int?

        @Flag(help: "One JSON object per line: id, label, properties (answers in their tagged form).")
        var json = false

        func validate() throws {
            if let limit, limit < 1 { throw ValidationError("--limit \(limit): give a number of entities, 1 or more.") }
        }

        func run() async throws {
            try await reportingErrors {
                let store = try home.openStore()
                var lists = Set<String>()
                for form in try await store.forms() {
                    lists.formUnion(try await store.form(id: form.id, version: form.version).entityListsUsed)
                }
                guard let list else {
                    if lists.isEmpty { warn("No form on this device uses an entity list.") }
                    for name in lists.sorted() { print(name) }
                    return
                }
                guard lists.contains(list) else {
                    warn(lists.isEmpty
                        ? "No form on this device uses an entity list; \(list) is not one."
                        : "No form on this device uses the list \(list); the lists are \(lists.sorted().joined(separator: ", ")).")
                    throw ExitCode(1)
                }
                var remaining = limit ?? Int.max
                store.forEachEntity(in: list, labelContaining: search) { row in
                    print(json ? Self.json(row) : Self.line(row))
                    remaining -= 1
                    return remaining > 0
                }
            }
        }

        /// `id<TAB>label<TAB>name=value; …`, properties in name order, control characters made visible.
        static func line(_ row: EntityRow) -> String {
            let properties = row.properties.keys.sorted().compactMap { name in
                row.properties[name].map { "\(name)=\($0.display())" }
            }
            return [row.id, row.label, properties.joined(separator: "; ")].map { TerminalText.visible($0) }.joined(separator: "\t")
        }

        static func json(_ row: EntityRow) -> String {
            struct Line: Encodable {
                var id: String
                var label: String
                var properties: [String: AnswerValue]
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? encoder.encode(Line(id: row.id, label: row.label, properties: row.properties))).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
    }
}

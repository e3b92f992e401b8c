import ArgumentParser
import Foundation
import ServerCore

extension FieldSheetServerCommand {
    /// `form publish FILE --project P`, `form list --project P`.
    struct Form: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Publish and list forms.", subcommands: [Publish.self, List.self])

        struct Publish: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Publish a form definition to a project.",
                discussion: """
                    The file is checked against the JSON Schema and the linter. An unchanged form keeps its version; \
                    a changed one becomes the next version. A change that would break stored records (removing a \
                    field they hold values for, changing such a field's kind) is refused with the reason (exit 1).
                    """)
            @OptionGroup var data: DataOptions
            @Argument(help: "Form definition (.json).", completion: .file(extensions: ["json"])) var file: String
            @Option(help: "Project to publish to.") var project: String

            func run() async throws {
                try await reportingFailures {
                    guard let contents = FileManager.default.contents(atPath: file) else {
                        throw CommandFailure("Cannot read \(file): it does not exist or is not readable.")
                    }
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        do {
                            let result = try await FormPublisher(storage: storage).publish(contents, file: file, projectId: project.id)
                            for warning in result.warnings { warn("\(warning)") }
                            print(result.isNew
                                  ? "published \(result.form.formId) version \(result.form.version) to \(project.name)"
                                  : "unchanged: \(result.form.formId) version \(result.form.version) is already published in \(project.name)")
                        } catch let error as FormPublishError {
                            throw CommandFailure("not published:\n" + error.reasons.joined(separator: "\n"))
                        }
                    }
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List every published version of every form of a project.")
            @OptionGroup var data: DataOptions
            @Option(help: "Project.") var project: String

            func run() async throws {
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        let formatter = ISO8601DateFormatter()
                        for form in try await storage.forms(projectId: project.id) {
                            print("\(form.formId)\t\(form.version)\t\(formatter.string(from: form.publishedAt))\t\(form.definition.title)")
                        }
                    }
                }
            }
        }
    }

    /// `export --project P --form F --format csv|jsonl`.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a form's records to stdout as CSV or JSON Lines.",
            discussion: "Streams a page at a time, so memory stays flat. Tombstones are included with state \"deleted\".")
        @OptionGroup var data: DataOptions
        @Option(help: "Project.") var project: String
        @Option(help: "Form id.") var form: String
        @Option(help: "csv or jsonl.") var format: RecordExporter.Format = .csv

        func run() async throws {
            try await reportingFailures {
                try await data.withStorage { storage in
                    let project = try await data.project(project, in: storage)
                    let out = FileHandle.standardOutput
                    let count = try await RecordExporter(storage: storage).export(projectId: project.id, formId: form, format: format) { line in
                        out.write(Data(line.utf8))
                    }
                    FileHandle.standardError.write(Data("exported \(count) record\(count == 1 ? "" : "s")\n".utf8))
                }
            }
        }
    }
}

extension RecordExporter.Format: ExpressibleByArgument {}

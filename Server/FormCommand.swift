import ArgumentParser
import Foundation
import FormModel
import ServerCore
import ServerStorage
import SyncCore
import XLSForm

extension FieldSheetServerCommand {
    /// `form publish FILE --project P`, `form list --project P`, `form export` (the same as `export`).
    struct Form: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Publish and list forms.", subcommands: [Publish.self, List.self, Export.self])

        struct Publish: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Publish a form definition (.json) or an XLSForm workbook (.xlsx) to a project.",
                discussion: """
                    The file is checked against the JSON Schema and the linter; a workbook is first converted as \
                    `fieldsheet form convert` does, and its findings name cells (survey!B14). An unchanged form keeps its version; \
                    a changed one becomes the next version. A change that would break stored records (changing the \
                    kind of a field they hold values for, moving it into or out of a repeat) is refused with the reason \
                    (exit 1); removing such a field is not (drafts of older versions move to the new one as they open, \
                    the answers it has no field for kept in their history).
                    """)
            @OptionGroup var data: DataOptions
            @Argument(help: "Form definition (.json) or XLSForm workbook (.xlsx).", completion: .file(extensions: ["json", "xlsx"])) var file: String
            @Option(help: "Project to publish to.") var project: String

            func run() async throws {
                try await reportingFailures {
                    let contents: Data
                    var workbookWarnings: [Finding]?
                    if XLSFormImporter.isWorkbook(file) {
                        let (definition, findings) = FormFiles().checkWorkbook(file)
                        guard let definition else {
                            throw CommandFailure("not published:\n" + findings.filter { $0.severity == .error }.map(\.description).joined(separator: "\n"))
                        }
                        contents = Data(definition.utf8)
                        workbookWarnings = findings.filter { $0.severity == .warning }
                    } else {
                        guard let data = FileManager.default.contents(atPath: file) else {
                            throw CommandFailure("Cannot read \(file): it does not exist or is not readable.")
                        }
                        contents = data
                    }
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        do {
                            let result = try await FormPublisher(storage: storage).publish(contents, file: file, projectID: project.id)
                            // A workbook's warnings name its cells; the publisher's are the same, about the JSON.
                            for warning in workbookWarnings ?? result.warnings { warn("\(warning)") }
                            if result.isNew {
                                await storage.auditCommandLine(
                                    .formPublished, projectID: project.id, subject: "\(result.form.formID)@\(result.form.version)",
                                    detail: ["file": (file as NSString).lastPathComponent, "title": result.form.definition.title])
                            }
                            print(result.isNew
                                  ? "published \(result.form.formID) version \(result.form.version) to \(project.name)"
                                  : "unchanged: \(result.form.formID) version \(result.form.version) is already published in \(project.name)")
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
                        for form in try await storage.forms(projectID: project.id) {
                            print("\(form.formID)\t\(form.version)\t\(formatter.string(from: form.publishedAt))\t\(form.definition.title)")
                        }
                    }
                }
            }
        }
    }

    /// `export --project P --form F --format csv|jsonl [--output-dir DIR]`.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a form's records as CSV or JSON Lines.",
            discussion: """
                Streams a page at a time, so memory stays flat. Tombstones are included with state "deleted". JSON Lines \
                nest each record's repeat instances. CSV of a form with repeats is one file for the records plus one per \
                repeat (rows keyed to their record and parent instance), written into --output-dir as FORM.csv and \
                FORM-REPEAT.csv; without repeats, CSV goes to stdout unless --output-dir is given. With --attachments DIR, \
                every attachment the records reference is written into DIR as RECORD-FIELD-NAME, and its CSV cell (or, in \
                JSON Lines, the record's "files" by answer key) gives that name; one not uploaded yet says so instead. \
                Answers of sensitive fields are sealed to a project key the server does not hold: --decrypt-with KEYFILE \
                (repeat it for older keys) writes them in clear; without their key they stay sealed ("sensitive — \
                encrypted (key ID)" in CSV, {"sealed": …} in JSON Lines) and the command says how many, by key. Also \
                run as `form export`.
                """)
        @OptionGroup var data: DataOptions
        @Option(help: "Project.") var project: String
        @Option(help: "Form id.") var form: String
        @Option(help: "csv or jsonl.") var format: RecordExporter.Format = .csv
        @Option(help: "Directory for the CSV files (needed for a form with repeats).") var outputDir: String?
        @Option(help: ArgumentHelp("Directory to write the records' attachments into (created if missing).", valueName: "dir")) var attachments: String?
        @Option(name: .customLong("decrypt-with"), help: ArgumentHelp("A project key file (from `project key create`) to decrypt sensitive answers with; repeat for older keys.", valueName: "keyfile"))
        var decryptWith: [String] = []

        func run() async throws {
            try await reportingFailures {
                try await data.withStorage { storage in
                    let project = try await data.project(project, in: storage)
                    if let attachments {
                        do {
                            try FileManager.default.createDirectory(atPath: attachments, withIntermediateDirectories: true)
                        } catch {
                            throw ValidationError("Cannot create the attachments directory \(attachments): \((error as NSError).localizedDescription)")
                        }
                    }
                    let keys: [String: ProjectPrivateKey]
                    do {
                        keys = try ProjectKeys.read(files: decryptWith)
                    } catch let error as ProjectKeyError {
                        throw CommandFailure(error.description)
                    }
                    let exporter = RecordExporter(storage: storage, attachmentsDirectory: attachments, decryptionKeys: keys)
                    let tables = format == .csv ? try await exporter.repeatTables(projectID: project.id, formID: form) : []
                    let count: Int
                    if let outputDir {
                        count = try await Self.exportFiles(exporter, project: project.id, form: form, format: format, tables: tables, into: outputDir)
                    } else {
                        guard tables.isEmpty else {
                            throw ValidationError("The form \(form) has repeats (\(tables.map(\.repeatID).joined(separator: ", "))), so its CSV export is one file per repeat besides the records' file. Give --output-dir DIR, or use --format jsonl for one stream with instances nested.")
                        }
                        let out = FileHandle.standardOutput
                        count = try await exporter.export(projectID: project.id, formID: form, format: format) { line in
                            out.write(Data(line.utf8))
                        }
                    }
                    FileHandle.standardError.write(Data("exported \(count) record\(count == 1 ? "" : "s")\n".utf8))
                    if exporter.sealed.opened > 0 {
                        FileHandle.standardError.write(Data("decrypted \(exporter.sealed.opened) sensitive answer\(exporter.sealed.opened == 1 ? "" : "s")\n".utf8))
                    }
                    for (key, left) in exporter.sealed.stillSealed.sorted(by: { $0.key < $1.key }) {
                        FileHandle.standardError.write(Data("\(left) sensitive answer\(left == 1 ? " is" : "s are") still sealed to key \(key) (sensitive — encrypted): give its key file with --decrypt-with\n".utf8))
                    }
                }
            }
        }

        static func exportFiles(_ exporter: RecordExporter, project: Int64, form: String, format: RecordExporter.Format, tables: [RecordExporter.RepeatTable], into directory: String) async throws -> Int {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            var handles: [String: FileHandle] = [:]
            func open(_ name: String) throws -> FileHandle {
                let path = (directory as NSString).appendingPathComponent(name)
                guard FileManager.default.createFile(atPath: path, contents: nil) else {
                    throw ValidationError("Cannot write \(path): check that the directory is writable.")
                }
                return try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            }
            let ext = format == .csv ? "csv" : "jsonl"
            handles[""] = try open("\(form).\(ext)")
            for table in tables { handles[table.repeatID] = try open("\(form)-\(table.repeatID).\(ext)") }
            defer { for handle in handles.values { try? handle.close() } }
            return try await exporter.export(projectID: project, formID: form, format: format) { table, line in
                handles[table ?? ""]?.write(Data(line.utf8))
            }
        }
    }
}

extension RecordExporter.Format: ExpressibleByArgument {}

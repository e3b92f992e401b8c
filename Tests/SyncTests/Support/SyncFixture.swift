import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import Logging
import SyncClient
import SyncCore

/// A real server with a project, its users and forms, and device homes that sync with it.
final class SyncFixture: @unchecked Sendable {
    let server: ServerProcess
    let project = "field"

    /// Sets up the project, publishes `forms` (before the server starts, as an admin would) and starts it.
    /// `database`: a PostgreSQL URL for the server's data instead of SQLite; `serveOptions`: more options
    /// for `serve`.
    init(forms: [FormDefinition], database: String? = nil, serveOptions: [String] = []) async throws {
        server = ServerProcess(database: database)
        try await server.createProject(project)
        for form in forms {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            try await server.publish(json: String(decoding: try encoder.encode(form), as: UTF8.self), project: project)
        }
        try await server.start(port: 0, options: serveOptions)
    }

    func user(_ name: String, role: String = "collector") async throws -> String {
        try await server.addUser(name, project: project, role: role)
    }

    /// A new device home logged in with `token`; `url` overrides the server's (a proxy in front of it).
    func device(token: String, url: String? = nil, retry: RetryPolicy = RetryPolicy(maxAttempts: 4, initialDelay: 0.05, maxDelay: 0.5, deadline: 10)) throws -> TestDevice {
        var configuration = SyncConfiguration(serverURL: url ?? server.url, project: project, token: token)
        configuration.retry = retry
        return try TestDevice(configuration: configuration)
    }
}

/// One device home: its DraftStore and a sync engine over a real transport (libcurl unless set).
final class TestDevice: @unchecked Sendable {
    let home: TemporaryDirectory
    let store: DraftStore
    var configuration: SyncConfiguration
    /// libcurl's options; the stall limit is 10 s, below the retry deadlines the tests give, so a request
    /// that gets no answer on a loaded machine is retried as a device in the field would, not the end of a test.
    var transportOptions: TransportOptions = {
        var options = TransportOptions()
        options.stallTimeout = 10
        return options
    }()
    var transport = TransportKind.curl

    init(configuration: SyncConfiguration, home: TemporaryDirectory = TemporaryDirectory("device")) throws {
        self.configuration = configuration
        self.home = home
        store = try DraftStore(home: home.url)
    }

    var engine: SyncEngine {
        var logger = Logger(label: "test-device")
        logger.logLevel = .critical
        // The kinds' options are valid for both (checked by TransportTests), so making one cannot fail here.
        let made = (try? transport.make(transportOptions)) ?? CurlTransport(options: transportOptions)
        return SyncEngine(store: store, transport: made, configuration: configuration, logger: logger)
    }

    @discardableResult
    func sync() async throws -> SyncSummary {
        try await engine.sync()
    }

    /// A new record of `form` with `values`; submitted when `submit`, else kept as a draft.
    func fill(_ form: String, _ values: [String: AnswerValue], submit: Bool = false) async throws -> UUID {
        let session = try await store.newRecord(formID: form)
        for (field, value) in values.sorted(by: { $0.key < $1.key }) { try await session.set(field, to: value) }
        if submit {
            let result = try await session.complete()
            guard result == .submitted else { throw FixtureError("could not submit: \(result)") }
        } else {
            try await session.dismiss(reason: .escape)
        }
        return session.recordID
    }

    /// Edits a draft or a submitted record (its form must allow editing after submission).
    func edit(_ record: UUID, _ values: [String: AnswerValue?], complete: Bool = false) async throws {
        let stored = try await store.record(record)
        let session = stored?.state == .submitted ? try await store.editSubmitted(record) : try await store.resumeDraft(record)
        for (field, value) in values.sorted(by: { $0.key < $1.key }) { try await session.set(field, to: value) }
        if complete {
            let result = try await session.complete()
            guard result == .submitted else { throw FixtureError("could not submit: \(result)") }
        } else {
            try await session.dismiss(reason: .escape)
        }
    }

    func values(_ record: UUID) async throws -> [String: AnswerValue] {
        try await store.record(record)?.answers ?? [:]
    }

    /// Every non-deleted record's answers and state, for comparing devices.
    func snapshot() async throws -> [UUID: String] {
        var result: [UUID: String] = [:]
        for summary in try await store.records() {
            let record = try await store.record(summary.id)
            let answers = (record?.answers ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.display())" }
            result[summary.id] = "\(summary.state.rawValue) " + answers.joined(separator: ",")
        }
        return result
    }
}

/// Forms for the sync tests.
enum SyncForms {
    /// A job: title (required), priority, count, notes; every field under `policy`.
    static func job(id: String = "job", policy: ConflictPolicy = .lastWriterWins) -> FormDefinition {
        FormDefinition(id: id, version: 1, title: "New Job", completionLabel: "Create", conflictPolicy: policy, editableAfterSubmit: true, pages: [
            FormPage(id: "main", fields: [
                FieldDefinition(id: "title", kind: .text, label: "Title", required: true),
                FieldDefinition(id: "priority", kind: .singleChoice, label: "Priority", choices: [Choice(value: "low", label: "Low"), Choice(value: "high", label: "High")]),
                FieldDefinition(id: "count", kind: .integer, label: "Count", min: 0, max: 1_000_000),
                FieldDefinition(id: "notes", kind: .multilineText, label: "Notes"),
            ]),
        ])
    }

    /// `count` text fields `f1`…, for bulk tests and the benchmark.
    static func wide(fields count: Int) -> FormDefinition {
        FormDefinition(id: "wide", version: 1, title: "Wide Record", completionLabel: "Create", editableAfterSubmit: true, pages: [
            FormPage(id: "main", fields: (1...count).map { FieldDefinition(id: "f\($0)", kind: .text, label: "Field \($0)") }),
        ])
    }
}

import Foundation
import FormModel
import Hummingbird
import HummingbirdTesting
import Logging
@testable import ServerCore
import SyncCore

/// A fresh server for one test: its own temporary data directory, storage, services and application.
struct TestServer: Sendable {
    let directory: String
    let storage: SQLiteStorage
    let services: ServerServices
    let app: FieldSheetApplication

    /// Runs `body` with a new server and removes its data directory afterwards.
    static func with<T: Sendable>(limits: ServerLimits = ServerLimits(), _ body: (TestServer) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fieldsheet-server-tests-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = try SQLiteStorage(directory: directory)
        try await storage.migrate()
        let services = ServerServices(storage: storage, limits: limits)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let app = buildApplication(ServerConfiguration(host: "127.0.0.1", port: 0, dataDirectory: directory, limits: limits), services: services, logger: logger)
        return try await body(TestServer(directory: directory, storage: storage, services: services, app: app))
    }

    func project(_ name: String) async throws -> ProjectInfo {
        if let existing = try await storage.project(named: name) { return existing }
        return try await storage.createProject(name: name)
    }

    /// Adds a member and returns their token.
    func member(_ name: String, project: String, role: Role) async throws -> String {
        let project = try await self.project(project)
        let token = AccessToken.generate()
        try await storage.addMember(userName: name, projectId: project.id, role: role, tokenHash: AccessToken.hash(token))
        return token
    }

    @discardableResult
    func publish(_ form: FormDefinition, project: String) async throws -> FormPublisher.Result {
        let project = try await self.project(project)
        return try await FormPublisher(storage: storage).publish(try JSONEncoder().encode(form), file: "\(form.id).json", projectId: project.id)
    }
}

/// The form most tests use: a job with a required title, a priority, a count and notes.
enum TestForms {
    static func job(policy: ConflictPolicy = .lastWriterWins, notesPolicy: ConflictPolicy? = nil, extraField: Bool = false) -> FormDefinition {
        var fields = [
            FieldDefinition(id: "title", kind: .text, label: "Title", required: true),
            FieldDefinition(id: "priority", kind: .singleChoice, label: "Priority", choices: [Choice(value: "low", label: "Low"), Choice(value: "high", label: "High")]),
            FieldDefinition(id: "count", kind: .integer, label: "Count", min: 0, max: 100),
            FieldDefinition(id: "notes", kind: .multilineText, label: "Notes", conflictPolicy: notesPolicy),
        ]
        if extraField { fields.append(FieldDefinition(id: "site", kind: .text, label: "Site")) }
        return FormDefinition(id: "job", version: 1, title: "New Job", completionLabel: "Create", conflictPolicy: policy, pages: [FormPage(id: "main", fields: fields)])
    }

    /// A form with `count` text fields `f1`…, for bulk tests.
    static func wide(fields count: Int) -> FormDefinition {
        FormDefinition(id: "wide", version: 1, title: "Wide Record", completionLabel: "Create", pages: [
            FormPage(id: "main", fields: (1...count).map { FieldDefinition(id: "f\($0)", kind: .text, label: "Field \($0)") })
        ])
    }
}

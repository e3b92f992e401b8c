import FieldSheetTesting
import Foundation
import FormModel
import Hummingbird
import HummingbirdTesting
import Logging
@testable import ServerCore
import ServerPostgres
import ServerSQLite
import ServerStorage
import SyncCore
import Testing

/// A fresh server for one test on one backend: its own temporary SQLite directory or PostgreSQL
/// database, storage, services and application.
struct TestServer: Sendable {
    let backend: Backend
    let location: StorageLocation
    let storage: any ServerStorage
    let services: ServerServices
    let app: FieldSheetApplication

    /// Runs `body` with a new server on `backend` and removes its data afterwards. The server holds a lease on
    /// the machine meanwhile (``MachineGate``), so no timing test measures beside it.
    static func with<T: Sendable>(
        _ backend: Backend, limits: ServerLimits = ServerLimits(), trustedProxies: TrustedProxies = TrustedProxies(), _ body: (TestServer) async throws -> T
    ) async throws -> T {
        try await MachineGate.shared.withLease {
            try await running(backend, limits: limits, trustedProxies: trustedProxies, body)
        }
    }

    private static func running<T: Sendable>(
        _ backend: Backend, limits: ServerLimits, trustedProxies: TrustedProxies, _ body: (TestServer) async throws -> T
    ) async throws -> T {
        try await withStorage(backend) { handle in
            try await handle.withRunning { storage in
                try await body(TestServer(backend: backend, location: handle.location, storage: storage, limits: limits, trustedProxies: trustedProxies))
            }
        }
    }

    /// Runs `body`; a PostgreSQL error that ends it is recorded with postgres-nio's full description first.
    /// postgres-nio describes its errors generically ("to prevent accidental leakage"); a test's failure needs
    /// the server's own message, code and the statement to be understood.
    static func recordingPostgresErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            if String(describing: type(of: error)) == "PSQLError" { Issue.record("PostgreSQL: \(String(reflecting: error))") }
            throw error
        }
    }

    /// A storage of `backend` over fresh data (not running, not migrated), removed after `body`.
    static func withStorage<T: Sendable>(_ backend: Backend, _ body: (LocatedStorage) async throws -> T) async throws -> T {
        switch backend {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fieldsheet-server-tests-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            return try await body(try LocatedStorage(.sqlite(directory: directory)))
        case .postgres:
            let server = try Backend.requirePostgres()
            return try await recordingPostgresErrors {
                try await TestDatabase.with(server) { database in
                    try await body(try LocatedStorage(.postgres(database)))
                }
            }
        }
    }

    static var quietLogger: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = ProcessInfo.processInfo.environment["FIELDSHEET_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        return logger
    }

    /// Another application (server instance) on the same storage.
    init(backend: Backend, location: StorageLocation, storage: any ServerStorage, limits: ServerLimits = ServerLimits(), trustedProxies: TrustedProxies = TrustedProxies()) {
        self.backend = backend
        self.location = location
        self.storage = storage
        self.services = ServerServices(storage: storage, limits: limits, trustedProxies: trustedProxies)
        self.app = buildApplication(ServerConfiguration(host: "127.0.0.1", port: 0, limits: limits), services: services, logger: Self.quietLogger)
    }

    /// Every byte the database holds about users and tokens, as text (to check what is stored).
    func storedText() async throws -> String {
        switch location {
        case .sqlite(let directory):
            let database = try String(contentsOfFile: directory + "/fieldsheet.sqlite", encoding: .isoLatin1)
            let wal = (try? String(contentsOfFile: directory + "/fieldsheet.sqlite-wal", encoding: .isoLatin1)) ?? ""
            return database + wal
        case .postgres(let database):
            return try await TestDatabase.text(database, "SELECT t::text FROM tokens t UNION ALL SELECT u::text FROM users u")
        }
    }

    func project(_ name: String) async throws -> ProjectInfo {
        if let existing = try await storage.project(named: name) { return existing }
        return try await storage.createProject(name: name)
    }

    /// Adds a member and returns their token.
    func member(_ name: String, project: String, role: Role) async throws -> String {
        let project = try await self.project(project)
        let token = AccessToken.generate()
        try await storage.addMember(userName: name, projectID: project.id, role: role, tokenHash: AccessToken.hash(token))
        return token
    }

    /// The user id a member's token authenticates.
    func userID(token: String) async throws -> Int64 {
        try #require(try await storage.principal(tokenHash: AccessToken.hash(token))).userID
    }

    @discardableResult
    func publish(_ form: FormDefinition, project: String) async throws -> FormPublisher.Result {
        let project = try await self.project(project)
        return try await FormPublisher(storage: storage).publish(try JSONEncoder().encode(form), file: "\(form.id).json", projectID: project.id)
    }
}

/// Where a test's storage lives: a SQLite data directory or a PostgreSQL database. Tests open it as
/// fieldsheet-server's composition root does (`Server/StorageLocation.swift`): the backend's storage handed to
/// ServerCore as a ``StorageHandle``.
enum StorageLocation: Sendable, Hashable {
    case sqlite(directory: String)
    case postgres(PostgresStorage.Configuration)

    func open(logger: Logger) throws -> StorageHandle {
        switch self {
        case .sqlite(let directory):
            return StorageHandle(storage: try SQLiteStorage(directory: directory), service: nil)
        case .postgres(let configuration):
            let storage = PostgresStorage(configuration, logger: logger)
            return StorageHandle(storage: storage, service: storage.service)
        }
    }
}

/// A storage opened at a known location (tests look behind the storage at its files or database).
struct LocatedStorage: Sendable {
    let location: StorageLocation
    let handle: StorageHandle

    init(_ location: StorageLocation) throws {
        self.location = location
        self.handle = try location.open(logger: TestServer.quietLogger)
    }

    func withRunning<T: Sendable>(migrating: Bool = true, _ body: (any ServerStorage) async throws -> T) async throws -> T {
        try await handle.withRunning(migrating: migrating, body)
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

import ArgumentParser
import Foundation
import Logging
import ServerCore
#if PostgreSQL
import ServerPostgres
#endif
import ServerStorage

/// `--data DIR` or `--database URL`, shared by every command.
struct DataOptions: ParsableArguments {
    /// Where the data lives when neither `--data` nor `FIELDSHEET_DATA` says: a fixed system path, never
    /// one that depends on the directory or the user the server was started from.
    static let defaultDataDirectory = "/var/lib/fieldsheet"

    @Option(
        name: .customLong("data"),
        help: ArgumentHelp(
            "Data directory holding fieldsheet.sqlite (the default storage), created owner-only (0700, files 0600). Default: $FIELDSHEET_DATA, else \(DataOptions.defaultDataDirectory) — never the current or home directory.",
            valueName: "dir"))
    var dataOption: String?

    /// The data directory: `--data`, else `$FIELDSHEET_DATA`, else the fixed system default.
    var data: String {
        if let dataOption { return dataOption }
        if let environment = ProcessInfo.processInfo.environment["FIELDSHEET_DATA"], !environment.isEmpty { return environment }
        return DataOptions.defaultDataDirectory
    }

    @Option(
        name: .long,
        help: ArgumentHelp(
            "PostgreSQL database instead of SQLite, shared by several server instances: postgres://USER[:PASSWORD]@HOST[:PORT]/DB.",
            valueName: "url"))
    var database: String?

    @Option(name: .customLong("pool-size"), help: "PostgreSQL: most connections this process opens.")
    var poolSize = 16

    @Option(
        name: .customLong("statement-timeout"),
        help: "PostgreSQL: seconds a statement, or the wait for a pooled connection, may take before the request gets 503.")
    var statementTimeout = 30.0

    func validate() throws {
        guard poolSize >= 1 else { throw ValidationError("--pool-size must be at least 1.") }
        guard statementTimeout > 0 else { throw ValidationError("--statement-timeout must be a positive number of seconds.") }
        if let database {
            #if PostgreSQL
            do { _ = try PostgresStorage.Configuration(url: database) } catch let error as StorageError { throw ValidationError(error.detail) }
            #else
            _ = database
            throw ValidationError(StorageLocation.withoutPostgreSQL.detail)
            #endif
        }
    }

    /// Where the data lives.
    func location() throws -> StorageLocation {
        try StorageLocation(
            database: database, dataDirectory: data, poolSize: poolSize,
            statementTimeout: .milliseconds(Int64(statementTimeout * 1000)))
    }

    /// Runs `body` with the migrated storage (and, for PostgreSQL, its connection pool running).
    func withStorage<T: Sendable>(_ body: (any ServerStorage) async throws -> T) async throws -> T {
        let location = try location()
        let handle: StorageHandle
        do {
            var logger = Logger(label: "fieldsheet-server")
            logger.logLevel = .critical
            handle = try location.open(logger: logger)
        } catch {
            throw CommandFailure("Cannot open \(location.displayName): \(error)")
        }
        do {
            return try await handle.withRunning(body)
        } catch let error as StorageError where error.code == .unavailable {
            throw CommandFailure("Cannot reach \(location.displayName): \(error.detail) Check that the database server runs and the URL is right.")
        }
    }

    /// Says where the data is, for messages (no password).
    var displayName: String { (try? location().displayName) ?? data }

    /// The same storage option for a command line in a hint.
    var commandLineOption: String { database.map { "--database \($0)" } ?? "--data \(data)" }

    /// The project named `name`, or a failure saying how to create it.
    func project(_ name: String, in storage: some ServerStorage) async throws -> ProjectInfo {
        guard let project = try await storage.project(named: name) else {
            throw CommandFailure("There is no project \"\(name)\" in \(displayName). Create it with: fieldsheet-server project create \(name) \(commandLineOption)")
        }
        return project
    }
}

/// A refusal or failure: the message goes to stderr and the exit status is 1.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension AsyncParsableCommand {
    /// Runs `body`, turning failures into a message on stderr and exit status 1.
    func reportingFailures(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as CommandFailure {
            warn("fieldsheet-server: \(error.description)")
            throw ExitCode(1)
        } catch let error as StorageError {
            warn("fieldsheet-server: \(error.detail)")
            throw ExitCode(1)
        }
    }
}

import ArgumentParser
import Foundation
import ServerCore

/// `--data DIR`, shared by every command.
struct DataOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Data directory holding fieldsheet.sqlite.", valueName: "dir"))
    var data = "./fieldsheet-data"

    /// The migrated storage.
    func openStorage() async throws -> SQLiteStorage {
        do {
            let storage = try SQLiteStorage(directory: data)
            try await storage.migrate()
            return storage
        } catch {
            throw CommandFailure("Cannot open the data directory \(data): \(error)")
        }
    }

    /// The project named `name`, or a failure saying how to create it.
    func project(_ name: String, in storage: some ServerStorage) async throws -> ProjectInfo {
        guard let project = try await storage.project(named: name) else {
            throw CommandFailure("There is no project \"\(name)\" in \(data). Create it with: fieldsheet-server project create \(name) --data \(data)")
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
            FileHandle.standardError.write(Data("fieldsheet-server: \(error.description)\n".utf8))
            throw ExitCode(1)
        } catch let error as StorageError {
            FileHandle.standardError.write(Data("fieldsheet-server: \(error.detail)\n".utf8))
            throw ExitCode(1)
        }
    }
}

import FieldSheetTesting
import Foundation
import GRDB
import Testing

/// What a careful operator checks about where and how `fieldsheet-server` keeps its data.
struct ServerStorageSafetyTests {
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int) & 0o777
    }

    @Test func theDataDirectoryAndDatabaseAreCreatedReadableByTheOwnerOnly() async throws {
        let server = ServerProcess()
        try await server.createProject("alpha")
        try await server.start()
        _ = try await server.addUser("ana", project: "alpha")
        #expect(try Self.mode(server.dataDirectory) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory)
        #expect(files.contains("fieldsheet.sqlite"))
        for file in files {
            #expect(try Self.mode(server.dataDirectory + "/" + file) == 0o600, "\(file)")
        }
        await server.stop()
    }

    @Test func aDatabaseFromANewerServerIsRefusedAndLeftUntouched() async throws {
        let server = ServerProcess()
        try await server.createProject("alpha")
        let path = server.dataDirectory + "/fieldsheet.sqlite"
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v7')") }
        try queue.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for arguments in [["serve", "--port", "0"], ["project", "create", "beta"]] {
            let result = try await Subprocess.run(server.binary, arguments + ["--data", server.dataDirectory], timeout: 30)
            #expect(result.status == 1, "\(result.output)")
            #expect(result.stderr.contains("migrated by a newer fieldsheet-server"), "\(result.output)")
            #expect(result.stderr.contains("v7"))
            #expect(result.stderr.contains("Upgrade fieldsheet-server"))
            #expect(!result.stdout.contains("listening on"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func theDefaultDataDirectoryIsFixedAndNeverTheCurrentOrHomeDirectory() async throws {
        let scratch = TemporaryDirectory("server-home")
        let binary = PackagePaths.debugProduct("fieldsheet-server")
        let help = try await Subprocess.run(binary, ["serve", "--help"], timeout: 30)
        #expect(help.stdout.contains("/var/lib/fieldsheet"), "\(help.output)")
        #expect(help.stdout.contains("FIELDSHEET_DATA"))
        // FIELDSHEET_DATA chooses the directory when --data is not given; HOME and the working directory play no part.
        let chosen = scratch.file("chosen")
        let result = try await Subprocess.run(
            binary, ["project", "create", "alpha"], environment: ["FIELDSHEET_DATA": chosen, "HOME": scratch.file("home")], timeout: 30)
        #expect(result.status == 0, "\(result.output)")
        #expect(FileManager.default.fileExists(atPath: chosen + "/fieldsheet.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("home")))
    }
}

import FieldSheetTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Uploads against the real `fieldsheet-server` whose connection breaks, whose process is killed, or whose
/// disk fills: nothing acknowledged is lost, and the upload continues from where the server's bytes end.
@Suite(.serialized)
struct AttachmentResilienceTests {
    enum Storage: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }

        static let environmentKey = "FIELDSHEET_TEST_POSTGRES_URL"
        /// SQLite always; PostgreSQL when FIELDSHEET_TEST_POSTGRES_URL names a server.
        static var available: [Storage] {
            guard let url = ProcessInfo.processInfo.environment[environmentKey], !url.isEmpty else {
                FileHandle.standardError.write(Data("⚠️  AttachmentResilienceTests: the PostgreSQL cases are SKIPPED: \(environmentKey) is not set.\n".utf8))
                return [.sqlite]
            }
            return [.sqlite, .postgres]
        }

        /// Runs `body` with a server (not started) on this storage: a fresh PostgreSQL database, dropped after.
        func withServer<T>(_ body: (ServerProcess) throws -> T) throws -> T {
            guard self == .postgres, let url = ProcessInfo.processInfo.environment[Self.environmentKey], var components = URLComponents(string: url) else {
                return try body(ServerProcess())
            }
            let name = "fieldsheet_attach_\(UUID().uuidString.prefix(8).lowercased())"
            try Self.psql(url, "CREATE DATABASE \(name)")
            defer { try? Self.psql(url, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
            components.path = "/" + name
            let server = ServerProcess(database: components.string ?? url)
            defer { server.kill() }
            return try body(server)
        }

        static func psql(_ url: String, _ statement: String) throws {
            let result = try Subprocess.run("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-qc", statement], timeout: 60)
            guard result.status == 0 else { throw FixtureError("psql \(statement) failed: \(result.output)") }
        }
    }

    static let seed = UInt64(ProcessInfo.processInfo.environment["FIELDSHEET_TEST_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)

    init() { print("AttachmentResilienceTests seed \(Self.seed) (FIELDSHEET_TEST_SEED to repeat)") }

    static func prepared(_ server: ServerProcess, options: [String] = []) throws -> AttachmentWire {
        try server.createProject("alpha")
        let token = try server.addUser("ana", project: "alpha")
        try server.start(options: options)
        return AttachmentWire(server: server, token: token)
    }

    @Test(arguments: Storage.available)
    func anUploadCutHalfwayResumesFromTheServersOffset(storage: Storage) throws {
        let data = SeededBytes.make(24 * 1024 * 1024 + 321, seed: Self.seed)
        let sha = AttachmentWire.sha256(data)
        try storage.withServer { server in
            let wire = try Self.prepared(server)
            let half = data.count / 2
            let first = try #require(try wire.open(sha, total: data.count, start: 0, end: data.count))
            wire.send(first, data[..<half])
            // What the server holds (PostgreSQL commits in chunks of a megabyte: up to one may still be buffered).
            #expect(Polling.until(timeout: 30) { wire.offset(sha) >= half - 2 * 1024 * 1024 })
            first.close()
            let done = try wire.resume(sha, data)
            #expect(done.status == 201, "\(done.body)")
            #expect(try wire.head(sha).headers["attachment-complete"] == "true")
            #expect(wire.bytesSent <= data.count + data.count / 10, "sent \(wire.bytesSent) bytes for a file of \(data.count)")
        }
    }

    @Test(arguments: Storage.available)
    func aServerKilledMidUploadLosesNothingItAcknowledged(storage: Storage) throws {
        let data = SeededBytes.make(20 * 1024 * 1024 + 77, seed: Self.seed)
        let sha = AttachmentWire.sha256(data)
        try storage.withServer { server in
            let wire = try Self.prepared(server)
            let part = data.count * 6 / 10
            let connection = try #require(try wire.open(sha, total: data.count, start: 0, end: data.count))
            wire.send(connection, data[..<part])
            var acknowledged = 0
            #expect(Polling.until(timeout: 30) {
                acknowledged = wire.offset(sha)
                return acknowledged >= part - 2 * 1024 * 1024
            })
            server.kill()
            connection.close()
            try server.restart()
            let after = wire.offset(sha)
            #expect(after >= acknowledged, "the server said it held \(acknowledged) bytes before it was killed, \(after) after")
            let done = try wire.resume(sha, data)
            #expect(done.status == 201, "the bytes kept across the kill hash right: \(done.body)")
        }
    }

    /// A tmpfs of 16 MiB as the data directory (root only: it mounts one).
    @Test(.enabled(if: getuid() == 0, "mounting a small file system needs root"))
    func aFullDiskIsAnswered507AndWhatArrivedIsKept() throws {
        let server = ServerProcess()
        let directory = server.dataDirectory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let mount = try Subprocess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", directory], timeout: 30)
        try #require(mount.status == 0, "mount: \(mount.output)")
        defer {
            server.kill()
            _ = try? Subprocess.run("/bin/umount", ["-l", directory], timeout: 30)
        }
        // A reserve smaller than the default, which is more than this whole file system.
        let wire = try Self.prepared(server, options: ["--storage-reserve-bytes", String(1024 * 1024)])

        let huge = SeededBytes.make(20 * 1024 * 1024, seed: Self.seed)
        let hugeSha = AttachmentWire.sha256(huge)
        let early = try #require(try wire.lastAnswer(hugeSha, total: huge.count), "refused before its body is sent")
        #expect(early.status == 507)
        #expect(early.headers["upload-offset"] == "0")
        #expect(early.body.contains("insufficient-storage"))

        let data = SeededBytes.make(8 * 1024 * 1024, seed: Self.seed &+ 1)
        let sha = AttachmentWire.sha256(data)
        let connection = try #require(try wire.open(sha, total: data.count, start: 0, end: data.count))
        let first = 3 * 1024 * 1024
        wire.send(connection, data[..<first])
        #expect(Polling.until(timeout: 30) { wire.offset(sha) == first })
        // Fill what is left of the disk.
        let filler = directory + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: filler))
        let block = Data(count: 256 * 1024)
        while (try? handle.write(contentsOf: block)) != nil {}
        try? handle.close()
        wire.send(connection, data[first...])
        let full = try #require(connection.readResponse(timeout: 30))
        #expect(full.status == 507, "\(full.body)")
        let kept = Int(full.headers["upload-offset"] ?? "") ?? -1
        #expect(kept >= first, "what arrived before the disk filled is kept")
        #expect(wire.offset(sha) == kept)
        try FileManager.default.removeItem(atPath: filler)
        let done = try wire.resume(sha, data)
        #expect(done.status == 201, "\(done.body)")
    }
}

extension AttachmentWire {
    /// The server's answer to a PUT it refuses before reading the body.
    func lastAnswer(_ sha256: String, total: Int) throws -> RawResponse? {
        let connection = try RawConnection(port: server.port)
        connection.send("""
            PUT \(path(sha256)) HTTP/1.1\r\nHost: fieldsheet\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/octet-stream\r\n\
            Content-Range: bytes 0-\(total - 1)/\(total)\r\nContent-Length: \(total)\r\n\r\n
            """)
        return connection.readResponse(timeout: 20)
    }
}

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
    /// SQLite always; PostgreSQL on `TestPostgres`'s server when there is one.
    enum Storage: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }

        static var available: [Storage] { TestPostgres.url == nil ? [.sqlite] : allCases }

        /// Runs `body` with a server (not started) on this storage: a fresh PostgreSQL database, dropped after.
        func withServer<T>(_ body: (ServerProcess) async throws -> T) async throws -> T {
            guard self == .postgres else { return try await body(ServerProcess()) }
            return try await TestPostgres.withDatabase(prefix: "fieldsheet_attach") { url in
                let server = ServerProcess(database: url)
                defer { server.kill() }
                return try await body(server)
            }
        }
    }

    static let seed = UInt64(ProcessInfo.processInfo.environment["FIELDSHEET_TEST_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)

    init() { print("AttachmentResilienceTests seed \(Self.seed) (FIELDSHEET_TEST_SEED to repeat)") }

    static func prepared(_ server: ServerProcess, options: [String] = []) async throws -> AttachmentWire {
        try await server.createProject("alpha")
        let token = try await server.addUser("ana", project: "alpha")
        try await server.start(options: options)
        return AttachmentWire(server: server, token: token)
    }

    @Test(arguments: Storage.available)
    func anUploadCutHalfwayResumesFromTheServersOffset(storage: Storage) async throws {
        let data = SeededBytes.make(24 * 1024 * 1024 + 321, seed: Self.seed)
        let sha = AttachmentWire.sha256(data)
        try await storage.withServer { server in
            let wire = try await Self.prepared(server)
            let half = data.count / 2
            let first = try #require(try await wire.open(sha, total: data.count, start: 0, end: data.count))
            wire.send(first, data[..<half])
            // What the server holds (PostgreSQL commits in chunks of a megabyte: up to one may still be buffered).
            #expect(await eventually(timeout: 30) { await wire.offset(sha) >= half - 2 * 1024 * 1024 })
            first.close()
            let done = try await wire.resume(sha, data)
            #expect(done.status == 201, "\(done.body)")
            #expect(try await wire.head(sha).headers["attachment-complete"] == "true")
            #expect(wire.bytesSent <= data.count + data.count / 10, "sent \(wire.bytesSent) bytes for a file of \(data.count)")
        }
    }

    @Test(arguments: Storage.available)
    func aServerKilledMidUploadLosesNothingItAcknowledged(storage: Storage) async throws {
        let data = SeededBytes.make(20 * 1024 * 1024 + 77, seed: Self.seed)
        let sha = AttachmentWire.sha256(data)
        try await storage.withServer { server in
            let wire = try await Self.prepared(server)
            let part = data.count * 6 / 10
            let connection = try #require(try await wire.open(sha, total: data.count, start: 0, end: data.count))
            wire.send(connection, data[..<part])
            var acknowledged = 0
            #expect(await eventually(timeout: 30) {
                acknowledged = await wire.offset(sha)
                return acknowledged >= part - 2 * 1024 * 1024
            })
            await server.killAndWait()
            connection.close()
            try await server.restart()
            let after = await wire.offset(sha)
            #expect(after >= acknowledged, "the server said it held \(acknowledged) bytes before it was killed, \(after) after")
            let done = try await wire.resume(sha, data)
            #expect(done.status == 201, "the bytes kept across the kill hash right: \(done.body)")
        }
    }

    /// A tmpfs of 16 MiB as the data directory (root only: it mounts one).
    @Test(.enabled(if: getuid() == 0, "mounting a small file system needs root"))
    func aFullDiskIsAnswered507AndWhatArrivedIsKept() async throws {
        let server = ServerProcess()
        let directory = server.dataDirectory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let mount = try await Subprocess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", directory], timeout: 30)
        try #require(mount.status == 0, "mount: \(mount.output)")
        defer {
            server.kill()
            _ = umount2(directory, Int32(MNT_DETACH))  // umount -l
        }
        // A reserve smaller than the default, which is more than this whole file system.
        let wire = try await Self.prepared(server, options: ["--storage-reserve-bytes", String(1024 * 1024)])

        let huge = SeededBytes.make(20 * 1024 * 1024, seed: Self.seed)
        let hugeSha = AttachmentWire.sha256(huge)
        let early = try #require(try await wire.lastAnswer(hugeSha, total: huge.count), "refused before its body is sent")
        #expect(early.status == 507)
        #expect(early.headers["upload-offset"] == "0")
        #expect(early.body.contains("insufficient-storage"))

        let data = SeededBytes.make(8 * 1024 * 1024, seed: Self.seed &+ 1)
        let sha = AttachmentWire.sha256(data)
        let connection = try #require(try await wire.open(sha, total: data.count, start: 0, end: data.count))
        let first = 3 * 1024 * 1024
        wire.send(connection, data[..<first])
        #expect(await eventually(timeout: 30) { await wire.offset(sha) == first })
        // Fill what is left of the disk.
        let filler = directory + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: filler))
        let block = Data(count: 256 * 1024)
        while (try? handle.write(contentsOf: block)) != nil {}
        try? handle.close()
        wire.send(connection, data[first...])
        let full = try #require(await connection.readResponse(timeout: 30))
        #expect(full.status == 507, "\(full.body)")
        let kept = Int(full.headers["upload-offset"] ?? "") ?? -1
        #expect(kept >= first, "what arrived before the disk filled is kept")
        #expect(await wire.offset(sha) == kept)
        try FileManager.default.removeItem(atPath: filler)
        let done = try await wire.resume(sha, data)
        #expect(done.status == 201, "\(done.body)")
    }
}

extension AttachmentWire {
    /// The server's answer to a PUT it refuses before reading the body.
    func lastAnswer(_ sha256: String, total: Int) async throws -> RawResponse? {
        let connection = try RawConnection(port: server.port)
        connection.send("""
            PUT \(path(sha256)) HTTP/1.1\r\nHost: fieldsheet\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/octet-stream\r\n\
            Content-Range: bytes 0-\(total - 1)/\(total)\r\nContent-Length: \(total)\r\n\r\n
            """)
        return await connection.readResponse(timeout: 20)
    }
}

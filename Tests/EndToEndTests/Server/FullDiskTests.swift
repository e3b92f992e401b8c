import FieldSheetTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real `fieldsheet-server` on a data directory that is a small tmpfs (root only: it mounts one), filled
/// by the test: a full disk answers 507 `insufficient-storage` to pushes as to uploads, `/v1/health` answers
/// 503 `degraded` while less than the reserve is free (also after a restart), an upload whose whole would eat
/// into the reserve is refused at its first piece, and everything works again once space is freed.
@Suite(.serialized)
struct FullDiskTests {
    static let reserve = 2 * 1024 * 1024

    /// One request on its own connection; the answer.
    static func exchange(_ server: ServerProcess, _ request: String) async throws -> RawResponse {
        let connection = try RawConnection(port: server.port)
        defer { connection.close() }
        connection.send(request)
        guard let response = await connection.readResponse(timeout: 30) else { throw FixtureError("no answer to \(request.prefix(60))") }
        return response
    }

    static func health(_ server: ServerProcess) async throws -> RawResponse {
        try await exchange(server, "GET /v1/health HTTP/1.1\r\nHost: fieldsheet\r\nConnection: close\r\n\r\n")
    }

    /// Pushes a new draft whose site answer is `bytes` long.
    static func push(_ server: ServerProcess, token: String, bytes: Int) async throws -> RawResponse {
        let millis = Int64(Date().timeIntervalSince1970 * 1000)
        let body = """
            {"clientId":"ana-phone","mutations":[{"mutationId":"\(UUID().uuidString.lowercased())","recordId":"\(UUID().uuidString)",\
            "formId":"follow-up-job","formVersion":1,"state":"draft","changes":{"site":{"value":{"text":"\(String(repeating: "x", count: bytes))"},\
            "baseRevision":0,"hlc":\(millis << 16)}}}]}
            """
        return try await exchange(server, """
            POST /v1/projects/alpha/push HTTP/1.1\r\nHost: fieldsheet\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\n\
            Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)
            """)
    }

    static func freeBytes(_ path: String) -> Int {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return -1 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    @Test(.enabled(if: getuid() == 0, "mounting a small file system needs root"))
    func aFullDiskAnswers507EverywhereAndHealthSaysDegraded() async throws {
        let server = ServerProcess()
        let directory = server.dataDirectory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let mount = try await Subprocess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", directory], timeout: 30)
        try #require(mount.status == 0, "mount: \(mount.output)")
        defer {
            server.kill()
            _ = umount2(directory, Int32(MNT_DETACH))  // umount -l
        }
        try await server.createProject("alpha")
        let token = try await server.addUser("ana", project: "alpha")
        try await server.publish(json: SampleForms.followUpJobJSON(), project: "alpha")
        let options = ["--storage-reserve-bytes", String(Self.reserve)]
        try await server.start(options: options)
        let wire = AttachmentWire(server: server, token: token)

        let healthy = try await Self.health(server)
        #expect(healthy.status == 200, "\(healthy.body)")
        #expect(healthy.body.contains(#""storage":"ok""#), "\(healthy.body)")

        // An upload whose whole does not fit above the reserve is refused at its first, small piece.
        let total = Self.freeBytes(directory) - Self.reserve + 512 * 1024
        let sha = String(repeating: "ab", count: 32)
        let refused = try await Self.exchange(server, """
            PUT \(wire.path(sha)) HTTP/1.1\r\nHost: fieldsheet\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/octet-stream\r\n\
            Content-Range: bytes 0-65535/\(total)\r\nContent-Length: 65536\r\nConnection: close\r\n\r\n
            """)
        #expect(refused.status == 507, "\(refused.status) \(refused.body)")
        #expect(refused.headers["content-type"] == "application/problem+json")
        #expect(refused.headers["upload-offset"] == "0")
        #expect(refused.body.contains("https://fieldsheet.dev/problems/insufficient-storage"), "\(refused.body)")
        #expect(refused.body.contains("storage-reserve-bytes"), "\(refused.body)")
        // One that fits is taken.
        let photo = SeededBytes.make(256 * 1024, seed: 30)
        let taken = try await wire.resume(AttachmentWire.sha256(photo), photo)
        #expect(taken.status == 201, "\(taken.body)")
        #expect(try await Self.push(server, token: token, bytes: 1_000).status == 200)

        // Fill the disk.
        let filler = directory + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: filler))
        let block = Data(count: 64 * 1024)
        while (try? handle.write(contentsOf: block)) != nil {}
        let small = Data(count: 512)
        while (try? handle.write(contentsOf: small)) != nil {}
        try? handle.close()

        let degraded = try await Self.health(server)
        #expect(degraded.status == 503, "\(degraded.body)")
        #expect(degraded.body.contains(#""status":"degraded""#) && degraded.body.contains(#""storage":"low""#), "\(degraded.body)")
        // Pushes fail for lack of space as 507 problems, never 500 (the first ones may still fit in pages SQLite holds).
        var answers: [Int] = []
        var full: RawResponse?
        for _ in 0..<40 where full == nil {
            let answer = try await Self.push(server, token: token, bytes: 48 * 1024)
            answers.append(answer.status)
            if answer.status != 200 { full = answer }
        }
        let refusedPush = try #require(full, "no push was refused on a full disk: \(answers)")
        #expect(refusedPush.status == 507, "\(answers) \(refusedPush.body)")
        #expect(refusedPush.headers["content-type"] == "application/problem+json")
        #expect(refusedPush.body.contains("https://fieldsheet.dev/problems/insufficient-storage"), "\(refusedPush.body)")

        // After a restart, health still says degraded.
        await server.stop()
        try await server.start(port: nil, options: options)
        let restarted = try await Self.health(server)
        #expect(restarted.status == 503 && restarted.body.contains(#""status":"degraded""#), "\(restarted.status) \(restarted.body)")

        // Space freed: healthy, and pushes are taken again.
        try FileManager.default.removeItem(atPath: filler)
        #expect(try await Self.health(server).status == 200)
        let again = try await Self.push(server, token: token, bytes: 1_000)
        #expect(again.status == 200, "\(again.body)")
    }
}

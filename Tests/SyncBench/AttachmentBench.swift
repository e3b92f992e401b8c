// The server's side of attachments on loopback: one file uploaded with a single PUT and downloaded with one GET,
// against a fresh release fieldsheet-server each time, at two sizes, to show the server's memory does not grow
// with the file (its peak RSS, VmHWM from /proc/PID/status, before and after each transfer).
import FieldSheetTesting
import FormModel
import Foundation
import SyncCore
#if canImport(Glibc)
import Glibc
#endif

/// Resident set size now and at its peak, in MB, of process `pid`.
func serverMemory(_ pid: Int32) -> (now: Double, peak: Double) {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    func field(_ name: String) -> Double {
        let line = status.split(separator: "\n").first { $0.hasPrefix(name) } ?? ""
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }
    return (field("VmRSS:"), field("VmHWM:"))
}

/// Writes `megabytes` of seeded pseudo-random bytes to `path` and returns their SHA-256.
func makeBenchFile(_ path: String, megabytes: Int, seed: UInt64) async throws -> String {
    var generator = SplitMix64(seed: seed)
    guard FileManager.default.createFile(atPath: path, contents: nil) else { throw FixtureError("cannot create \(path)") }
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    for _ in 0..<megabytes {
        var piece = [UInt64](repeating: 0, count: (1 << 20) / 8)
        for index in piece.indices { piece[index] = generator.next() }
        try handle.write(contentsOf: piece.withUnsafeBytes { Data($0) })
    }
    try handle.close()
    let sum = try await Subprocess.run("/usr/bin/sha256sum", [path], timeout: 120)
    return String(sum.stdout.prefix(64))
}

/// The attachment benches' settings: the seed of their files (`SYNCBENCH_SEED`, 42) and the sizes in MB
/// (`SYNCBENCH_ATTACHMENT_MB`, "20,200").
func attachmentBenchSettings() -> (seed: UInt64, sizes: [Int]) {
    let seed = UInt64(ProcessInfo.processInfo.environment["SYNCBENCH_SEED"] ?? "") ?? 42
    let sizes = (ProcessInfo.processInfo.environment["SYNCBENCH_ATTACHMENT_MB"] ?? "20,200").split(separator: ",").compactMap { Int($0) }
    return (seed, sizes)
}

/// A release server (not started) with project "bench", a collector's token and a form of one photo field.
func photoBenchServer(bin: String) async throws -> (server: ServerProcess, token: String) {
    let server = ServerProcess(binary: "\(bin)/fieldsheet-server")
    try await server.createProject("bench")
    let token = try await server.addUser("bench", project: "bench", role: "collector")
    try await server.publish(json: """
        { "id": "photos", "version": 1, "title": "Photos", "completionLabel": "Send",
          "pages": [ { "id": "main", "fields": [ { "id": "photo", "kind": "photo", "label": "Photo" } ] } ] }
        """, project: "bench")
    return (server, token)
}

func runAttachmentBench(bin: String) async throws {
    print("Attachments on loopback (release fieldsheet-server, embedded SQLite; one PUT up, one GET down; server RSS from /proc):")
    let (seed, sizes) = attachmentBenchSettings()
    for megabytes in sizes {
        let (server, token) = try await photoBenchServer(bin: bin)
        let file = server.data.file("blob-\(megabytes)")
        let sha = try await makeBenchFile(file, megabytes: megabytes, seed: seed)
        let bytes = megabytes << 20
        try await server.start(port: 0)
        defer { server.kill() }
        guard let pid = server.processIdentifier else { throw FixtureError("the server is not running") }
        let idle = serverMemory(pid)

        let path = "/v1/projects/bench/attachments/\(sha)"
        let up = try RawConnection(port: server.port)
        let uploadStart = Date()
        guard up.send("PUT \(path) HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes 0-\(bytes - 1)/\(bytes)\r\nContent-Length: \(bytes)\r\n\r\n") else { throw FixtureError("the server closed the connection") }
        try up.send(file: file)
        guard let uploaded = await up.readResponseCountingBody(timeout: 600) else { throw FixtureError("no answer to the upload") }
        let uploadSeconds = Date().timeIntervalSince(uploadStart)
        up.close()
        guard uploaded.status == 201 else { throw FixtureError("the upload was answered \(uploaded.status)") }
        let afterUpload = serverMemory(pid)

        // A record referencing the file, so its author may download it.
        let reference = AttachmentReference(sha256: sha, bytes: Int64(bytes), type: "image/jpeg", name: "bench.jpg")
        let push = PushRequest(clientID: "bench-device", mutations: [Mutation(
            mutationID: UUID().uuidString, recordID: UUID(), form: FormKey(id: "photos", version: 1), state: .submitted,
            changes: ["photo": FieldChange(value: .attachment(reference), baseRevision: 0, hlc: HybridTimestamp(millis: HybridLogicalClock.wallMillis(), counter: 0))])])
        let body = String(decoding: push.jsonBytes(), as: UTF8.self)
        let pusher = try RawConnection(port: server.port)
        guard pusher.send("POST /v1/projects/bench/push HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)") else { throw FixtureError("the server closed the connection") }
        guard let pushed = await pusher.readResponseCountingBody(timeout: 60) else { throw FixtureError("no answer to the push") }
        pusher.close()
        guard pushed.status == 200 else { throw FixtureError("the push was answered \(pushed.status)") }

        let down = try RawConnection(port: server.port)
        let downloadStart = Date()
        guard down.send("GET \(path) HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer \(token)\r\n\r\n") else { throw FixtureError("the server closed the connection") }
        guard let downloaded = await down.readResponseCountingBody(timeout: 600) else { throw FixtureError("no complete answer to the download") }
        let downloadSeconds = Date().timeIntervalSince(downloadStart)
        down.close()
        guard downloaded.status == 200, downloaded.bodyBytes == bytes else { throw FixtureError("the download was answered \(downloaded.status) with \(downloaded.bodyBytes) bytes") }
        let afterDownload = serverMemory(pid)
        print(String(
            format: "  %4d MB: upload %.2f s (%.0f MB/s, verified and fsynced), download %.2f s (%.0f MB/s); server RSS idle %.1f MB, peak %.1f MB after the upload, %.1f MB after the download",
            megabytes, uploadSeconds, Double(megabytes) / uploadSeconds, downloadSeconds, Double(megabytes) / downloadSeconds,
            idle.now, afterUpload.peak, afterDownload.peak))
    }
}

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

/// A plain loopback socket that streams a file up or a body down through a 1 MiB buffer.
struct BenchSocket {
    let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw FixtureError("connect: \(String(cString: strerror(errno)))") }
    }

    func close() { Glibc.close(descriptor) }

    func send(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = Glibc.send(descriptor, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            guard sent > 0 else { throw FixtureError("send: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    func send(_ text: String) throws { try Array(text.utf8).withUnsafeBytes { try send($0) } }

    /// Sends the file at `path` in 1 MiB pieces.
    func send(file path: String) throws {
        let input = open(path, O_RDONLY)
        defer { Glibc.close(input) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            try buffer.withUnsafeBytes { try send(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }

    /// Reads one response: its status and how many body bytes came (Content-Length framing), discarding them.
    func receive() throws -> (status: Int, bodyBytes: Int) {
        var head = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var rest = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw FixtureError("the server closed the connection before answering") }
            head.append(contentsOf: buffer[0..<count])
            if let end = head.indices.dropLast(3).first(where: { head[$0] == 13 && head[$0 + 1] == 10 && head[$0 + 2] == 13 && head[$0 + 3] == 10 }) {
                rest = head.count - end - 4
                head.removeSubrange((end + 4)...)
                break
            }
        }
        let text = String(decoding: head, as: UTF8.self)
        let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
        let length = text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        var received = rest
        while received < length {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw FixtureError("the body ended after \(received) of \(length) bytes") }
            received += count
        }
        return (status, received)
    }
}

/// Writes `megabytes` of seeded pseudo-random bytes to `path` and returns their SHA-256.
func makeBenchFile(_ path: String, megabytes: Int, seed: UInt64) throws -> String {
    var generator = SplitMix64(seed: seed)
    guard FileManager.default.createFile(atPath: path, contents: nil) else { throw FixtureError("cannot create \(path)") }
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    for _ in 0..<megabytes {
        var piece = [UInt64](repeating: 0, count: (1 << 20) / 8)
        for index in piece.indices { piece[index] = generator.next() }
        try handle.write(contentsOf: piece.withUnsafeBytes { Data($0) })
    }
    try handle.close()
    let sum = try Subprocess.run("/usr/bin/sha256sum", [path], timeout: 120)
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
func photoBenchServer(bin: String) throws -> (server: ServerProcess, token: String) {
    let server = ServerProcess(binary: "\(bin)/fieldsheet-server")
    try server.createProject("bench")
    let token = try server.addUser("bench", project: "bench", role: "collector")
    try server.publish(json: """
        { "id": "photos", "version": 1, "title": "Photos", "completionLabel": "Send",
          "pages": [ { "id": "main", "fields": [ { "id": "photo", "kind": "photo", "label": "Photo" } ] } ] }
        """, project: "bench")
    return (server, token)
}

func runAttachmentBench(bin: String) async throws {
    print("Attachments on loopback (release fieldsheet-server, embedded SQLite; one PUT up, one GET down; server RSS from /proc):")
    let (seed, sizes) = attachmentBenchSettings()
    for megabytes in sizes {
        let (server, token) = try photoBenchServer(bin: bin)
        let file = server.data.file("blob-\(megabytes)")
        let sha = try makeBenchFile(file, megabytes: megabytes, seed: seed)
        let bytes = megabytes << 20
        try server.start(port: 0)
        defer { server.stop() }
        guard let pid = server.processIdentifier else { throw FixtureError("the server is not running") }
        let idle = serverMemory(pid)

        let path = "/v1/projects/bench/attachments/\(sha)"
        let up = try BenchSocket(port: server.port)
        let uploadStart = Date()
        try up.send("PUT \(path) HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes 0-\(bytes - 1)/\(bytes)\r\nContent-Length: \(bytes)\r\n\r\n")
        try up.send(file: file)
        let uploaded = try up.receive()
        let uploadSeconds = Date().timeIntervalSince(uploadStart)
        up.close()
        guard uploaded.status == 201 else { throw FixtureError("the upload was answered \(uploaded.status)") }
        let afterUpload = serverMemory(pid)

        // A record referencing the file, so its author may download it.
        let reference = AttachmentReference(sha256: sha, bytes: Int64(bytes), type: "image/jpeg", name: "bench.jpg")
        let push = PushRequest(clientId: "bench-device", mutations: [Mutation(
            mutationId: UUID().uuidString, recordId: UUID(), formId: "photos", formVersion: 1, state: .submitted,
            changes: ["photo": FieldChange(value: .attachment(reference), baseRevision: 0, hlc: HybridTimestamp(millis: HybridLogicalClock.wallMillis(), counter: 0))])])
        let body = String(decoding: try JSONEncoder().encode(push), as: UTF8.self)
        let pusher = try BenchSocket(port: server.port)
        try pusher.send("POST /v1/projects/bench/push HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let pushed = try pusher.receive()
        pusher.close()
        guard pushed.status == 200 else { throw FixtureError("the push was answered \(pushed.status)") }

        let down = try BenchSocket(port: server.port)
        let downloadStart = Date()
        try down.send("GET \(path) HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer \(token)\r\n\r\n")
        let downloaded = try down.receive()
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

import Crypto
import FieldSheetTesting
import Foundation

/// Attachment requests to a real `fieldsheet-server` over raw sockets, counting every body byte sent, so tests
/// can cut a connection anywhere in a body.
final class AttachmentWire: @unchecked Sendable {
    let server: ServerProcess
    let token: String
    let project: String
    private let lock = NSLock()
    private var sent = 0

    init(server: ServerProcess, token: String, project: String = "alpha") {
        self.server = server
        self.token = token
        self.project = project
    }

    /// Body bytes sent so far, over every request.
    var bytesSent: Int { lock.withLock { sent } }

    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    func path(_ sha256: String) -> String { "/v1/projects/\(project)/attachments/\(sha256)" }

    func head(_ sha256: String) async throws -> RawResponse {
        let connection = try RawConnection(port: server.port)
        connection.send("HEAD \(path(sha256)) HTTP/1.1\r\nHost: fieldsheet\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
        guard let response = await connection.readResponse(timeout: 20) else { throw FixtureError("HEAD \(sha256) got no answer") }
        return response
    }

    /// The server's Upload-Offset for the attachment (-1 when HEAD fails).
    func offset(_ sha256: String) async -> Int {
        await (try? head(sha256)).flatMap { $0.headers["upload-offset"] }.flatMap { Int($0) } ?? -1
    }

    /// Opens a PUT of `data[start..<end]` (the whole of `data` being the attachment) and sends its head; the
    /// caller sends the body with ``send(_:_:)``. Returns nil, sending no body byte, when the server answers
    /// at once (an upload of it still running, a wrong offset).
    func open(_ sha256: String, total: Int, start: Int, end: Int) async throws -> RawConnection? {
        let connection = try RawConnection(port: server.port)
        connection.send("""
            PUT \(path(sha256)) HTTP/1.1\r\nHost: fieldsheet\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/octet-stream\r\n\
            Content-Range: bytes \(start)-\(end - 1)/\(total)\r\nContent-Length: \(end - start)\r\n\r\n
            """)
        // A refusal comes before any body byte is read; an accepted upload answers nothing until its body is in.
        if case .data = await connection.read(timeout: 0.3) { return nil }
        return connection
    }

    func send(_ connection: RawConnection, _ bytes: Data) {
        if connection.send(bytes) { lock.withLock { sent += bytes.count } }
    }

    /// Uploads `data` from the server's offset to the end, retrying while an earlier request still holds the
    /// upload; returns the final answer. One attempt may take up to `timeout` for its answer (a debug server on a
    /// loaded machine takes long over ten megabytes), and the retries as long again after it: the deadline
    /// bounds a hang, it does not time the upload.
    func resume(_ sha256: String, _ data: Data, timeout: Double = 120) async throws -> RawResponse {
        var answer: RawResponse?
        _ = try await eventually(timeout: 2 * timeout) {
            let start = await offset(sha256)
            guard start >= 0, start < data.count, let connection = try await open(sha256, total: data.count, start: start, end: data.count) else { return false }
            send(connection, data[start...])
            answer = await connection.readResponse(timeout: timeout)
            return answer.map { $0.status != 409 } ?? false
        }
        guard let answer else { throw FixtureError("the upload of \(sha256) could not be resumed") }
        return answer
    }
}

/// Random bytes from a seed (SplitMix64), printed by the tests that use them.
enum SeededBytes {
    static func make(_ count: Int, seed: UInt64) -> Data {
        var generator = SplitMix64(seed: seed)
        var data = Data(count: count)
        data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
            var index = 0
            while index < count {
                var word = generator.next()
                for _ in 0..<8 where index < count {
                    raw[index] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
        }
        return data
    }
}

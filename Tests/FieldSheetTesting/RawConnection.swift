import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to a server on loopback, for tests that send what no HTTP client would: nothing
/// at all, a header one byte at a time, a body shorter than it said, broken chunks.
public final class RawConnection: @unchecked Sendable {
    public enum ReadResult: Equatable, Sendable {
        case data(Data)
        /// The peer closed (end of stream or reset).
        case closed
        case timedOut
    }

    private let lock = NSLock()
    private var descriptor: Int32
    /// Everything read so far.
    public private(set) var received = Data()

    /// Connects to 127.0.0.1:`port` (the connection may wait in the server's listen backlog);
    /// `receiveBuffer` shrinks the socket's receive buffer, for a client that reads slowly.
    public init(port: Int, receiveBuffer: Int? = nil) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw FixtureError("socket: \(String(cString: strerror(errno)))") }
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let message = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw FixtureError("connect to port \(port): \(message)")
        }
    }

    deinit { close() }

    /// Sends `bytes`; false when the peer has closed the connection.
    @discardableResult
    public func send(_ bytes: Data) -> Bool {
        lock.withLock {
            guard descriptor >= 0 else { return false }
            return bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let sent = Glibc.send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                    if sent < 0 { return false }
                    offset += sent
                }
                return true
            }
        }
    }

    @discardableResult
    public func send(_ text: String) -> Bool { send(Data(text.utf8)) }

    /// No more bytes from this side (the server sees the end of the request stream).
    public func shutdownWrite() {
        lock.withLock { if descriptor >= 0 { _ = shutdown(descriptor, Int32(SHUT_WR)) } }
    }

    /// Waits at most `timeout` seconds for bytes, the end of the stream, or neither.
    public func read(timeout: Double) async -> ReadResult {
        keep(await receive(timeout: timeout, upTo: 65_536))
    }

    private func keep(_ result: ReadResult) -> ReadResult {
        if case .data(let chunk) = result { lock.withLock { received.append(chunk) } }
        return result
    }

    /// Reads what arrives within `timeout` seconds (at most `limit` bytes) without keeping it in ``received``.
    /// The task sleeps briefly between looks, so no thread is held while nothing arrives.
    private func receive(timeout: Double, upTo limit: Int) async -> ReadResult {
        let deadline = ContinuousClock.now + .seconds(max(0, timeout))
        var pause = Duration.microseconds(200)
        while true {
            let result = receiveNow(upTo: limit)
            guard case .timedOut = result, ContinuousClock.now < deadline else { return result }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(20))
        }
    }

    /// What is there to read now: bytes, the end of the stream, or nothing yet (`.timedOut`).
    private func receiveNow(upTo limit: Int) -> ReadResult {
        let fd = lock.withLock { descriptor }
        guard fd >= 0 else { return .closed }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, 0)
        if ready == 0 { return .timedOut }
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = recv(fd, &buffer, buffer.count, 0)
        if count <= 0 { return .closed }
        return .data(Data(buffer.prefix(count)))
    }

    /// Sends the file at `path` in 1 MiB pieces, never whole in memory (a large upload's body).
    public func send(file path: String) throws {
        guard let input = FileHandle(forReadingAtPath: path) else { throw FixtureError("cannot read \(path)") }
        defer { try? input.close() }
        while let piece = try input.read(upToCount: 1 << 20), !piece.isEmpty {
            guard send(piece) else { throw FixtureError("the server closed the connection during the upload") }
        }
    }

    /// Reads one response and counts its Content-Length body without keeping it (a large download), for at
    /// most `timeout` seconds; nil when the connection closed or the time passed first.
    public func readResponseCountingBody(timeout: Double) async -> (status: Int, bodyBytes: Int)? {
        let deadline = Date().addingTimeInterval(timeout)
        func next() async -> Data? {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, case .data(let chunk) = await receive(timeout: left, upTo: 1 << 20) else { return nil }
            return chunk
        }
        var start = Data()
        var head = RawResponse.head(start)
        while head == nil {
            guard let chunk = await next() else { return nil }
            start.append(chunk)
            head = RawResponse.head(start)
        }
        guard let head else { return nil }
        let length = Int(head.headers["content-length"] ?? "0") ?? 0
        var bodyBytes = start.count - (head.bodyStart - start.startIndex)
        while bodyBytes < length {
            guard let chunk = await next() else { return nil }
            bodyBytes += chunk.count
        }
        return (head.status, bodyBytes)
    }

    /// Reads until the peer closes, for at most `timeout` seconds; true when it closed.
    public func readUntilClosed(timeout: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return false }
            if await read(timeout: left) == .closed { return true }
        }
    }

    /// Whether the peer has closed, without waiting (reads whatever is pending).
    public var isClosedByPeer: Bool {
        while true {
            switch keep(receiveNow(upTo: 65_536)) {
            case .closed: return true
            case .timedOut: return false
            case .data: continue
            }
        }
    }

    /// The response read so far, reading whatever is pending without waiting; nil while it is incomplete.
    public var responseSoFar: RawResponse? {
        _ = isClosedByPeer
        return RawResponse(lock.withLock { received })
    }

    /// Reads one HTTP response (head and a Content-Length body), for at most `timeout` seconds.
    public func readResponse(timeout: Double) async -> RawResponse? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let response = RawResponse(lock.withLock { received }) { return response }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return nil }
            if case .closed = await read(timeout: left) { return RawResponse(lock.withLock { received }) }
        }
    }

    /// Forgets what was read (before the next request on the connection).
    public func clearReceived() { lock.withLock { received = Data() } }

    public func close() {
        lock.withLock {
            if descriptor >= 0 { Glibc.close(descriptor) }
            descriptor = -1
        }
    }
}

/// An HTTP/1.1 response as it came off the wire.
public struct RawResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: String

    /// Parses a complete response from `data`; nil while it is incomplete.
    public init?(_ data: Data) {
        guard let head = Self.head(data) else { return nil }
        let rest = data[head.bodyStart...]
        let length = Int(head.headers["content-length"] ?? "0") ?? 0
        guard rest.count >= length else { return nil }
        self.status = head.status
        self.headers = head.headers
        self.body = String(decoding: rest.prefix(length), as: UTF8.self)
    }

    /// The status line and headers at the start of `data` (header names lowercased), and where the body
    /// starts; nil while the head is incomplete.
    public static func head(_ data: Data) -> (status: Int, headers: [String: String], bodyStart: Data.Index)? {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else { return nil }
        let lines = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1."), let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers, end.upperBound)
    }
}

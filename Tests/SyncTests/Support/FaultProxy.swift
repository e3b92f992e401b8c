import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on loopback in front of the server that breaks pushes on purpose: each queued fault is
/// used by the next request starting with "POST " (a push), on whichever connection carries it.
final class FaultProxy: @unchecked Sendable {
    enum Fault: Sendable, Hashable {
        /// Forward only the first `bytes` of the request, then close both sides: the server never
        /// gets the whole request.
        case cutRequest(bytes: Int)
        /// Forward the request, then only the first `bytes` of the response, then close.
        case cutResponse(bytes: Int)
        /// Forward the request; when the response starts, close without passing any of it on: the
        /// server has committed and the device never hears.
        case loseResponse
        /// Forward the request and hold the response back until the client gives up.
        case stall
    }

    private let listener: Int32
    let port: Int
    private let targetPort: Int
    private let lock = NSLock()
    private var pending: [Fault] = []
    private var used = 0
    private var closed = false
    /// The start of the requests the faults apply to: pushes ("POST ") unless set (attachment uploads: "PUT ").
    var faultedRequests = "POST "

    init(targetPort: Int) throws {
        self.targetPort = targetPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 64) == 0 else { throw ProxyError.cannotListen }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { close() }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Faults for the next pushes, in order; pushes after them pass untouched.
    func enqueue(_ faults: [Fault]) { lock.withLock { pending.append(contentsOf: faults) } }

    /// Drops the faults not used yet.
    func clearFaults() { lock.withLock { pending.removeAll() } }

    /// How many faults have been used.
    var faultsUsed: Int { lock.withLock { used } }

    func close() {
        let wasClosed = lock.withLock { () -> Bool in
            defer { closed = true }
            return closed
        }
        if !wasClosed {
            shutdown(listener, Int32(SHUT_RDWR))
            Glibc.close(listener)
        }
    }

    private func takeFault() -> Fault? {
        lock.withLock {
            guard !pending.isEmpty else { return nil }
            used += 1
            return pending.removeFirst()
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if lock.withLock({ closed }) { return }
                continue
            }
            Thread.detachNewThread { [self] in relay(client) }
        }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Bytes of requests (headers and bodies) that reached the server through the proxy: what a client
    /// really sent over the wire, a cut request counting only what got through.
    var relayedRequestBytes: Int { lock.withLock { relayed } }
    private var relayed = 0
    private func noteRelayed(_ count: Int) {
        if count > 0 { lock.withLock { relayed += count } }
    }

    /// The request line of each request the proxy passed on whose connection is still open and whose
    /// response has not started: the requests a server holds (long-polls) and their clients still wait for.
    var awaitingResponses: [String] { lock.withLock { Array(awaiting.values) } }
    private var awaiting: [Int32: String] = [:]

    private func relay(_ client: Int32) {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: UInt16(targetPort))
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        defer {
            lock.withLock { awaiting[client] = nil }
            Glibc.close(client)
            Glibc.close(server)
        }
        guard connected == 0 else { return }
        var fault: Fault?
        var responseBytes = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: server, events: Int16(POLLIN), revents: 0)]
        while true {
            guard poll(&fds, 2, 30_000) > 0 else { return }
            if fds[0].revents != 0 {
                let count = read(client, &buffer, buffer.count)
                if count <= 0 { return }
                let head = String(decoding: buffer[0..<min(count, 200)], as: UTF8.self)
                if ["GET ", "POST ", "PUT ", "HEAD "].contains(where: head.hasPrefix) {
                    lock.withLock { awaiting[client] = String(head.prefix { $0 != "\r" && $0 != "\n" }) }
                }
                if fault == nil, count >= faultedRequests.utf8.count, String(decoding: buffer[0..<faultedRequests.utf8.count], as: UTF8.self) == faultedRequests {
                    fault = takeFault()
                    responseBytes = 0
                }
                if case .cutRequest(let limit)? = fault {
                    let written = write(server, buffer, min(limit, count))
                    noteRelayed(written)
                    return
                }
                let written = write(server, buffer, count)
                noteRelayed(written)
                guard written == count else { return }
            }
            if fds[1].revents != 0 {
                let count = read(server, &buffer, buffer.count)
                if count <= 0 { return }
                lock.withLock { awaiting[client] = nil }
                switch fault {
                case .cutResponse(let limit)?:
                    _ = write(client, buffer, min(limit, count))
                    return
                case .loseResponse?:
                    return
                case .stall?:
                    // Keep the connection open, pass nothing on, until the client hangs up.
                    var drain = [pollfd(fd: client, events: Int16(POLLIN), revents: 0)]
                    while poll(&drain, 1, 30_000) > 0 {
                        if read(client, &buffer, buffer.count) <= 0 { return }
                    }
                    return
                case .cutRequest?, nil:
                    responseBytes += count
                    guard write(client, buffer, count) == count else { return }
                }
            }
        }
    }
}

enum ProxyError: Error {
    case cannotListen
}

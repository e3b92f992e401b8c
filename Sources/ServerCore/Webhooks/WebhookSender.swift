import Foundation
import Synchronization
#if canImport(CCurl)
import CCurl
#endif

/// Sends webhook deliveries over libcurl, each on a thread of the sender's own (never one of Swift's cooperative
/// threads), as outbound requests made on an admin's word: no redirect followed, http and https only, no proxy
/// from the environment, each attempt bounded by ``WebhookOptions/timeout``, at most
/// ``WebhookOptions/maxResponseBytes`` of the answer read, and, unless the operator allows them, no connection
/// to a loopback, link-local, private or otherwise non-public address — checked on the address libcurl is
/// about to connect to (its open-socket callback), after resolution, so a public name that resolves to a
/// private address is refused too.
///
/// Connections are kept: an attempt takes an idle libcurl handle of its URL's pool (whose open, keep-alive
/// connection it then reuses) or a new one, and puts it back afterwards, so a receiver that answers meets one
/// connection per delivery under way at once rather than one per delivery. The threads are kept too
/// (``BlockingWorkers``): an idle one takes the next attempt, and one idle for half a minute ends. What decides
/// which delivery starts when runs on a thread of its own too (``DispatchThread``), so no step between a push's
/// hand-over and its attempt waits for a turn on Swift's cooperative threads, which the pushes themselves use.
final class WebhookSender: Sendable {
    /// What one attempt came to.
    struct Response: Sendable, Hashable {
        /// The HTTP status, when the receiver answered.
        var status: Int?
        /// Why it failed; nil for a 2xx.
        var error: String?
        var millis: Int
        var delivered: Bool { error == nil }
    }

    let options: WebhookOptions
    private let workers = BlockingWorkers(name: "fs-webhook-send")
    private let connections: ConnectionPool

    /// A sender keeping up to `keepPerURL` idle connections to each URL.
    init(options: WebhookOptions, keepPerURL: Int) {
        self.options = options
        connections = ConnectionPool(idlePerURL: keepPerURL)
    }

    /// Runs `job` (an attempt, ``send(url:body:headers:)``) on one of the sender's worker threads, then what it
    /// returns once that thread counts as free again (``BlockingWorkers/run(returning:)``).
    func run(_ job: @escaping @Sendable () -> @Sendable () -> Void) {
        workers.run(returning: job)
    }

    /// The most worker threads alive at once so far (for tests).
    var mostThreads: Int { workers.mostThreads }

    /// Posts `body` to `url` with `headers` (whole lines, `Name: value`) on a kept connection, blocking the
    /// calling thread (a worker's, ``run(_:)``) until the attempt ends.
    func send(url: String, body: String, headers: [String]) -> Response {
        let handle = connections.take(url: url)
        let response = perform(handle: handle, url: url, body: body, headers: headers)
        connections.put(handle, url: url, reusable: response.status != nil)
        return response
    }

    /// Addresses a delivery never connects to unless the operator allows it: "this network", private
    /// (RFC 1918, unique local), shared (RFC 6598), loopback, link-local, benchmarking, multicast and reserved.
    static let nonPublic: [IPAddressRange] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
        "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
        "::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8",
    ].compactMap { try? IPAddressRange(cidr: $0) }

    /// Whether `bytes` (4 or 16) is an address a delivery may connect to without the operator's leave. An
    /// IPv6 address that carries an IPv4 one (mapped, or NAT64's 64:ff9b::/96) is judged by that.
    static func isPublic(_ bytes: [UInt8]) -> Bool {
        var address = IPAddress(bytes: bytes)
        if bytes.count == 16,
           bytes.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF])
            || bytes.prefix(12).elementsEqual([0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]) {
            address = IPAddress(bytes: Array(bytes.suffix(4)))
        }
        return !nonPublic.contains { $0.contains(address) }
    }

    #if canImport(CCurl)
    private static let globalInit: Void = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()

    /// Sets what every attempt on `curl` shares (its URL's handle: the pool keeps handles by URL), once.
    private func prepare(_ curl: UnsafeMutableRawPointer, url: String, context: Context) {
        _ = fs_curl_setopt_string(curl, CURLOPT_URL, url)
        _ = fs_curl_setopt_long(curl, CURLOPT_POST, 1)
        _ = fs_curl_setopt_string(curl, CURLOPT_USERAGENT, "FieldSheet-Webhooks/1")
        _ = fs_curl_setopt_long(curl, CURLOPT_FOLLOWLOCATION, 0)
        _ = fs_curl_setopt_string(curl, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = fs_curl_setopt_string(curl, CURLOPT_PROXY, "")  // the environment's proxy would hide the address connected to
        let timeout = Int(WebhookOptions.seconds(options.timeout) * 1000)
        _ = fs_curl_setopt_long(curl, CURLOPT_TIMEOUT_MS, max(1, timeout))
        _ = fs_curl_setopt_long(curl, CURLOPT_CONNECTTIMEOUT_MS, max(1, timeout))
        _ = fs_curl_setopt_long(curl, CURLOPT_NOSIGNAL, 1)
        _ = fs_curl_setopt_pointer(curl, CURLOPT_ERRORBUFFER, context.errorBuffer)
        let data = Unmanaged.passUnretained(context).toOpaque()  // the handle keeps its context alive
        _ = fs_curl_setopt_opensocket_callback(curl) { userdata, _, address in
            guard let userdata, let address else { return fs_curl_socket_bad() }
            let context = Unmanaged<Context>.fromOpaque(userdata).takeUnretainedValue()
            var raw = [UInt8](repeating: 0, count: 16)
            let count = Int(fs_curl_sockaddr_bytes(address, &raw))
            let bytes = Array(raw.prefix(count))
            guard count > 0, context.allowPrivate || WebhookSender.isPublic(bytes) else {
                context.refused = count > 0 ? IPAddress(bytes: bytes).description : "an address of an unknown family"
                return fs_curl_socket_bad()
            }
            return fs_curl_open_socket(address)
        }
        _ = fs_curl_setopt_pointer(curl, CURLOPT_OPENSOCKETDATA, data)
        _ = fs_curl_setopt_data_callback(curl, CURLOPT_WRITEFUNCTION) { buffer, size, count, userdata in
            let context = Unmanaged<Context>.fromOpaque(userdata!).takeUnretainedValue()
            let length = size * count
            let room = max(0, context.limit - context.body.count)
            if let buffer, room > 0 {
                context.body.append(contentsOf: UnsafeRawBufferPointer(start: buffer, count: min(room, length)))
            }
            guard length <= room else {
                context.truncated = true
                return 0  // stops the transfer: enough of the answer was read
            }
            return length
        }
        _ = fs_curl_setopt_pointer(curl, CURLOPT_WRITEDATA, data)
    }

    /// One attempt on `handle` (its connection reused when it is still open), blocking the calling thread. A
    /// handle's options are set at its first attempt (``prepare(_:url:context:)``); each attempt sets only its
    /// headers and body, and the headers every attempt sends are one list per handle, linked after the attempt's.
    func perform(handle: CurlHandle, url: String, body: String, headers: [String]) -> Response {
        _ = Self.globalInit
        let started = ContinuousClock.now
        func millis() -> Int {
            let elapsed = ContinuousClock.now - started
            return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        }
        guard let curl = handle.pointer else { return Response(status: nil, error: "libcurl could not start", millis: 0) }
        let context = handle.context
        if !handle.prepared {
            context.limit = options.maxResponseBytes
            context.allowPrivate = options.allowPrivateAddresses
            prepare(curl, url: url, context: context)
            handle.prepared = true
        }
        context.reset()
        guard let shared = handle.sharedHeaders else { return Response(status: nil, error: "libcurl could not start", millis: 0) }
        // The attempt's own headers, then the shared ones (linked for the attempt, unlinked before the free).
        var headerList: UnsafeMutablePointer<curl_slist>?
        var last: UnsafeMutablePointer<curl_slist>?
        for line in headers {
            guard let node = curl_slist_append(nil, line) else {
                curl_slist_free_all(headerList)
                return Response(status: nil, error: "libcurl could not start", millis: 0)
            }
            if let last { last.pointee.next = node } else { headerList = node }
            last = node
        }
        last?.pointee.next = shared
        defer {
            last?.pointee.next = nil
            curl_slist_free_all(headerList)
        }
        _ = fs_curl_setopt_pointer(curl, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList ?? shared))
        // The body is sent from the claimed string's own bytes (CURLOPT_POSTFIELDS, not copied), which stay
        // alive until the attempt ends.
        var body = body
        body.makeContiguousUTF8()

        let code = body.utf8.withContiguousStorageIfAvailable { bytes -> CURLcode in
            _ = fs_curl_setopt_offset(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
            _ = fs_curl_setopt_pointer(curl, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: UnsafeRawPointer(bytes.baseAddress) ?? UnsafeRawPointer(bitPattern: 1)!))
            defer { _ = fs_curl_setopt_pointer(curl, CURLOPT_POSTFIELDS, nil) }
            return curl_easy_perform(curl)
        } ?? CURLE_FAILED_INIT
        var status = 0
        _ = fs_curl_getinfo_long(curl, CURLINFO_RESPONSE_CODE, &status)
        if let refused = context.refused {
            return Response(
                status: nil,
                error: "refused to connect to \(refused): a loopback, link-local, private or reserved address (the server's operator may allow them with serve --webhooks-allow-private-addresses)",
                millis: millis())
        }
        guard code == CURLE_OK || (code == CURLE_WRITE_ERROR && context.truncated && status > 0) else {
            let message = String(cString: context.errorBuffer)
            let detail = message.isEmpty ? String(cString: curl_easy_strerror(code)) : message
            let kind = code == CURLE_OPERATION_TIMEDOUT ? "timed out" : code == CURLE_COULDNT_CONNECT ? "connection failed" : "request failed"
            return Response(status: nil, error: "\(kind): \(detail)", millis: millis())
        }
        guard (200..<300).contains(status) else {
            let answer = String(decoding: context.body.prefix(200), as: UTF8.self)
                .filter { !$0.isNewline }
            let redirect = (300..<400).contains(status) ? " (redirects are not followed)" : ""
            return Response(status: status, error: "HTTP \(status)\(redirect)\(answer.isEmpty ? "" : ": \(answer)")", millis: millis())
        }
        return Response(status: status, error: nil, millis: millis())
    }
    #else
    func perform(handle: CurlHandle, url: String, body: String, headers: [String]) -> Response {
        Response(status: nil, error: "this server was built without libcurl and cannot deliver webhooks", millis: 0)
    }
    #endif
}

/// A libcurl easy handle and the connection it keeps open between attempts; used by one attempt at a time, all
/// to one URL (the pool keeps handles by URL), so its options are set once.
final class CurlHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
    /// What its callbacks share; lives as long as the handle.
    fileprivate let context = Context()
    /// Whether the options every attempt shares are set.
    fileprivate var prepared = false
    #if canImport(CCurl)
    /// The headers every attempt sends, after its own.
    fileprivate let sharedHeaders: UnsafeMutablePointer<curl_slist>?
    #endif

    init() {
        #if canImport(CCurl)
        pointer = curl_easy_init()
        var list: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Content-Type: application/json")
        if let first = list, curl_slist_append(first, "Expect:") == nil {
            curl_slist_free_all(first)
            list = nil
        }
        sharedHeaders = list
        #else
        pointer = nil
        #endif
    }

    deinit {
        #if canImport(CCurl)
        if let pointer { curl_easy_cleanup(pointer) }
        curl_slist_free_all(sharedHeaders)
        #endif
    }
}

/// What libcurl's callbacks of a handle's attempt share: the answer read so far, the address refused, and the
/// error message; reset before each attempt.
private final class Context: @unchecked Sendable {
    var limit = 0
    var allowPrivate = false
    var body: [UInt8] = []
    var truncated = false
    var refused: String?
    /// libcurl's error message (CURLOPT_ERRORBUFFER: at least CURL_ERROR_SIZE, 256, bytes).
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: 257)

    init() {
        errorBuffer.initialize(repeating: 0, count: 257)
    }

    func reset() {
        body.removeAll(keepingCapacity: true)
        truncated = false
        refused = nil
        errorBuffer[0] = 0
    }

    deinit {
        errorBuffer.deallocate()
    }
}

/// Idle libcurl handles by URL, each keeping its connection to that URL's receiver open.
private final class ConnectionPool: Sendable {
    /// The most idle handles kept per URL; more are closed when they come back.
    let idlePerURL: Int
    private let idle = Mutex([String: [CurlHandle]]())

    init(idlePerURL: Int) {
        self.idlePerURL = idlePerURL
    }

    /// An idle handle of `url`, or a new one.
    func take(url: String) -> CurlHandle {
        idle.withLock { $0[url]?.popLast() } ?? CurlHandle()
    }

    /// Puts `handle` back for the next attempt to `url`; one whose receiver never answered is closed (its
    /// connection is of no use, and a receiver that is down should not keep handles).
    func put(_ handle: CurlHandle, url: String, reusable: Bool) {
        guard reusable else { return }
        idle.withLock { idle in
            if idle[url, default: []].count < idlePerURL { idle[url, default: []].append(handle) }
        }
    }
}

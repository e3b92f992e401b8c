#if canImport(CCurl)
import CCurl
import Foundation

/// HTTP over libcurl: one easy handle reused for every request of this transport, so a sync keeps
/// its connection open; compressed responses accepted and decoded; the proxy environment variables
/// (`http_proxy`, `https_proxy`, `no_proxy`) honoured as libcurl does by default. Cancelling the task
/// that sends a request ends it at once (its connection is closed) and throws `CancellationError`.
public final class CurlTransport: HTTPTransport, @unchecked Sendable {
    let options: TransportOptions
    private let queue = DispatchQueue(label: "fieldsheet.curl")
    /// The request runs in this multi handle, whose wait `curl_multi_wakeup` (safe from any thread)
    /// interrupts when the request is cancelled; its connection cache keeps the connection between requests.
    fileprivate let multi: UnsafeMutableRawPointer?
    // Only touched on `queue`.
    private var handle: UnsafeMutableRawPointer?
    private var opened = 0

    /// How many connections this transport has opened so far (1 for a whole sync when reuse works).
    public var connectionsOpened: Int { queue.sync { opened } }

    private static let globalInit: Void = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()

    /// A transport with these options (the system's certificate authorities and default timeouts unless given).
    public init(options: TransportOptions = TransportOptions()) {
        _ = Self.globalInit
        self.options = options
        multi = curl_multi_init()
    }

    /// A second libcurl transport with the same options, on a connection of its own: a held long-poll
    /// on it does not queue this transport's requests.
    public func independent() -> any HTTPTransport {
        CurlTransport(options: options)
    }

    deinit {
        if let handle { curl_easy_cleanup(handle) }
        if let multi { curl_multi_cleanup(multi) }
    }

    /// Sends one request on this transport's connection (requests queue behind each other). Cancelling
    /// the calling task ends the request at once, waiting or under way, and throws `CancellationError`.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let cancellation = Cancellation(transport: self)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                queue.async {
                    continuation.resume(with: Result { try self.perform(request, cancellation: cancellation) })
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// Runs one request on the transport's queue.
    private func perform(_ request: TransportRequest, cancellation: Cancellation) throws -> TransportResponse {
        if cancellation.isCancelled { throw CancellationError() }
        if handle == nil { handle = curl_easy_init() }
        guard let curl = handle, let multi else { throw TransportError(kind: .other, detail: "libcurl could not start") }
        curl_easy_reset(curl)  // keeps live connections and caches, clears options

        let sink = ResponseSink()
        let unmanaged = Unmanaged.passRetained(sink)
        defer { unmanaged.release() }
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

        _ = fs_curl_setopt_string(curl, CURLOPT_URL, request.url)
        _ = fs_curl_setopt_string(curl, CURLOPT_CUSTOMREQUEST, request.method)
        if request.method == "HEAD" { _ = fs_curl_setopt_long(curl, CURLOPT_NOBODY, 1) }
        if let body = request.body {
            _ = fs_curl_setopt_offset(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            body.withUnsafeBytes { bytes in
                _ = fs_curl_setopt_pointer(curl, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
            }
        }
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            headerList = curl_slist_append(headerList, "\(name): \(value)")
        }
        // An empty Expect header stops libcurl waiting for "100 Continue" before large bodies.
        headerList = curl_slist_append(headerList, "Expect:")
        _ = fs_curl_setopt_pointer(curl, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList))
        _ = fs_curl_setopt_string(curl, CURLOPT_ACCEPT_ENCODING, "")  // every encoding libcurl can decode
        _ = fs_curl_setopt_string(curl, CURLOPT_USERAGENT, options.userAgent)
        _ = fs_curl_setopt_long(curl, CURLOPT_CONNECTTIMEOUT_MS, Int(options.connectTimeout * 1000))
        _ = fs_curl_setopt_long(curl, CURLOPT_LOW_SPEED_LIMIT, 1)
        _ = fs_curl_setopt_long(curl, CURLOPT_LOW_SPEED_TIME, max(1, Int(options.stallTimeout.rounded(.up))))
        _ = fs_curl_setopt_long(curl, CURLOPT_NOSIGNAL, 1)
        _ = fs_curl_setopt_long(curl, CURLOPT_TCP_KEEPALIVE, 1)
        _ = fs_curl_setopt_long(curl, CURLOPT_SSL_VERIFYPEER, options.verifyTLS ? 1 : 0)
        _ = fs_curl_setopt_long(curl, CURLOPT_SSL_VERIFYHOST, options.verifyTLS ? 2 : 0)
        if let caFile = options.caFile { _ = fs_curl_setopt_string(curl, CURLOPT_CAINFO, caFile) }
        _ = fs_curl_setopt_data_callback(curl, CURLOPT_WRITEFUNCTION, { buffer, size, count, context in
            let sink = Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            if let buffer { sink.body.append(UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: length) }
            return length
        })
        _ = fs_curl_setopt_pointer(curl, CURLOPT_WRITEDATA, unmanaged.toOpaque())
        _ = fs_curl_setopt_data_callback(curl, CURLOPT_HEADERFUNCTION, { buffer, size, count, context in
            let sink = Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            if let buffer {
                let line = String(decoding: UnsafeRawBufferPointer(start: buffer, count: length), as: UTF8.self)
                sink.header(line)
            }
            return length
        })
        _ = fs_curl_setopt_pointer(curl, CURLOPT_HEADERDATA, unmanaged.toOpaque())

        let code = try errorBuffer.withUnsafeMutableBufferPointer { buffer -> CURLcode in
            _ = fs_curl_setopt_pointer(curl, CURLOPT_ERRORBUFFER, buffer.baseAddress)
            defer { _ = fs_curl_setopt_pointer(curl, CURLOPT_ERRORBUFFER, nil) }
            return try Self.run(curl, in: multi, cancellation: cancellation)
        }
        guard code == CURLE_OK else {
            let message = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            var detail = message.isEmpty ? String(cString: curl_easy_strerror(code)) : message
            if code == CURLE_SSL_CACERT_BADFILE, let caFile = options.caFile { detail = "the CA file \(caFile) could not be used: \(detail)" }
            throw TransportError(kind: Self.kind(of: code), detail: detail)
        }
        var status = 0
        _ = fs_curl_getinfo_long(curl, CURLINFO_RESPONSE_CODE, &status)
        var connects = 0
        _ = fs_curl_getinfo_long(curl, CURLINFO_NUM_CONNECTS, &connects)
        opened += connects
        return TransportResponse(status: status, headers: sink.headers, body: sink.body)
    }

    /// Runs the transfer of `curl` in `multi` until it ends, or until it is cancelled: then it is taken out
    /// of the multi handle mid-transfer, which closes its connection, and `CancellationError` is thrown.
    private static func run(_ curl: UnsafeMutableRawPointer, in multi: UnsafeMutableRawPointer, cancellation: Cancellation) throws -> CURLcode {
        let added = curl_multi_add_handle(multi, curl)
        guard added == CURLM_OK else { throw TransportError(kind: .other, detail: String(cString: curl_multi_strerror(added))) }
        defer { curl_multi_remove_handle(multi, curl) }
        while true {
            var running: Int32 = 0
            let performed = curl_multi_perform(multi, &running)
            guard performed == CURLM_OK else { throw TransportError(kind: .other, detail: String(cString: curl_multi_strerror(performed))) }
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                if message.pointee.msg == CURLMSG_DONE, message.pointee.easy_handle == curl { return message.pointee.data.result }
            }
            if cancellation.isCancelled { throw CancellationError() }
            // Sleeps until the socket is ready, a libcurl timer is due, or `Cancellation.cancel()` wakes it.
            let polled = curl_multi_poll(multi, nil, 0, 1000, nil)
            guard polled == CURLM_OK else { throw TransportError(kind: .other, detail: String(cString: curl_multi_strerror(polled))) }
            if cancellation.isCancelled { throw CancellationError() }
        }
    }

    static func kind(of code: CURLcode) -> TransportError.Kind {
        switch code {
        case CURLE_COULDNT_CONNECT: return .cannotConnect
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .cannotResolve
        case CURLE_OPERATION_TIMEDOUT: return .stalled
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE: return .tls
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE: return .connectionLost
        default: return .other
        }
    }
}

/// Whether one request was cancelled; cancelling wakes the transport's multi handle from its wait.
private final class Cancellation: @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false
    /// Held so that its multi handle outlives any wake-up.
    private let transport: CurlTransport

    init(transport: CurlTransport) {
        self.transport = transport
    }

    var isCancelled: Bool { lock.withLock { cancelled } }

    func cancel() {
        lock.withLock { cancelled = true }
        if let multi = transport.multi { curl_multi_wakeup(multi) }
    }
}

/// Collects a response's headers and body from libcurl's callbacks.
private final class ResponseSink {
    var body = Data()
    var headers: [String: String] = [:]

    func header(_ line: String) {
        if line.hasPrefix("HTTP/") {
            headers = [:]  // a new response (after a redirect or 100 Continue) starts over
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        headers[name] = value
    }
}
#endif

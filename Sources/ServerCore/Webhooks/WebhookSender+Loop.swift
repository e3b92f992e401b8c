import Foundation
import Synchronization
#if canImport(CCurl)
import CCurl
#endif

/// One of the sender's threads with its multi handle: the transfers added to it, its epoll set, its kept easy
/// handles; the first one also runs the delivery service's turns.
final class SenderLoop: @unchecked Sendable {
    typealias Response = WebhookSender.Response

    let options: WebhookOptions
    /// The most idle connections the multi handle keeps open (all endpoints together).
    let keptConnections: Int
    private let keepPerURL: Int
    private let name: String
    private let interval: Duration
    private let control = Mutex(Control())
    #if canImport(CCurl)
    /// Touched only by the sender's thread (and by `init`/`deinit`).
    private let multi: UnsafeMutableRawPointer?
    /// What libcurl's socket and timer callbacks reach: the epoll set and the timer's deadline.
    private let poller: Poller
    private let wakeFD: Int32
    private var transfers: [UnsafeMutableRawPointer: Transfer] = [:]
    private var idle: [String: [CurlHandle]] = [:]
    /// A transfer ended since the last turn (its slot is free): the next turn runs at once.
    private var endedSinceTurn = false
    #endif

    private struct Control {
        var poked = false
        var started = false
        var stopping = false
        var turnsEnded = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        /// Attempts asked for from any thread, taken by the sender's thread.
        var inbox: [WebhookSender.Request] = []
        /// Transfers added or waiting in the inbox, not yet finished.
        var open = 0
        var threadID: UInt?
    }

    init(options: WebhookOptions, keepPerURL: Int, keptConnections: Int, name: String, interval: Duration) {
        self.options = options
        self.keepPerURL = keepPerURL
        self.keptConnections = keptConnections
        self.name = name
        self.interval = interval
        #if canImport(CCurl)
        _ = Self.globalInit
        multi = curl_multi_init()
        poller = Poller(epoll: fs_epoll_open())
        wakeFD = fs_eventfd_open()
        if poller.epoll >= 0, wakeFD >= 0 { _ = fs_epoll_watch(poller.epoll, wakeFD, CURL_POLL_IN) }
        if let multi {
            _ = fs_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, keptConnections)
            let data = Unmanaged.passUnretained(poller).toOpaque()  // the sender keeps its poller as long as the multi handle
            _ = fs_curl_multi_setopt_socket_callback(multi) { _, socket, what, userdata, _ in
                guard let userdata else { return -1 }
                let poller = Unmanaged<Poller>.fromOpaque(userdata).takeUnretainedValue()
                // A socket libcurl closed before telling us is already out of the set: nothing to do.
                _ = fs_epoll_watch(poller.epoll, socket, what)
                return 0
            }
            _ = fs_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, data)
            _ = fs_curl_multi_setopt_timer_callback(multi) { _, timeout, userdata in
                guard let userdata else { return -1 }
                let poller = Unmanaged<Poller>.fromOpaque(userdata).takeUnretainedValue()
                poller.timerDeadline = timeout < 0 ? nil : ContinuousClock.now + .milliseconds(Int(timeout))
                return 0
            }
            _ = fs_curl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, data)
        }
        #endif
    }

    deinit {
        #if canImport(CCurl)
        idle = [:]
        if let multi { curl_multi_cleanup(multi) }
        if poller.epoll >= 0 { close(poller.epoll) }
        if wakeFD >= 0 { close(wakeFD) }
        #endif
    }

    /// Starts the thread; `turn` (if any) runs on it at once, then on each poke, after transfers ended, and at
    /// least every `interval`, until ``stop()``; without a turn, `ended` is called after transfers ended. A
    /// second start does nothing.
    func start(turn: (@Sendable () -> Void)?, ended: (@Sendable () -> Void)?) {
        let first = control.withLock { control -> Bool in
            defer { control.started = true }
            return !control.started
        }
        guard first else { return }
        let thread = Thread { [self] in loop(turn, ended: ended) }
        thread.start()
    }

    /// Asks for a turn as soon as the thread is free; from any thread, never waits. Pokes that come during a turn
    /// make one more turn, not one each.
    func poke() {
        let wake = control.withLock { control -> Bool in
            defer { control.poked = true }
            return !control.poked
        }
        #if canImport(CCurl)
        if wake, wakeFD >= 0 { fs_eventfd_signal(wakeFD) }
        #endif
    }

    /// No turn runs any more once this returns (the one under way ended); the thread goes on with the transfers
    /// under way (each bounded by the timeout), calls their `finished`, then ends and closes its connections.
    func stop() async {
        await withCheckedContinuation { continuation in
            let done = control.withLock { control -> Bool in
                control.stopping = true
                if control.turnsEnded || !control.started {
                    control.turnsEnded = true
                    return true
                }
                control.stopWaiters.append(continuation)
                return false
            }
            if done {
                continuation.resume()
            } else {
                poke()
            }
        }
    }

    /// Hands `requests` (``WebhookSender/begin(_:)``) to this thread, which adds them to its transfers; from its
    /// own thread (a turn) they join them right after the turn.
    func begin(_ requests: [WebhookSender.Request]) {
        let onThread = control.withLock { control -> Bool in
            control.inbox.append(contentsOf: requests)
            control.open += requests.count
            return control.threadID == UInt(pthread_self())
        }
        if !onThread { poke() }
    }

    /// Attempts added and not yet finished (for tests).
    var transfersOpen: Int { control.withLock { $0.open } }

    #if canImport(CCurl)
    private static let globalInit: Void = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()

    /// The thread: runs the turns and drives its transfers until stopped and none is left.
    private func loop(_ turn: (@Sendable () -> Void)?, ended: (@Sendable () -> Void)?) {
        setCurrentThreadName(name)
        control.withLock { $0.threadID = UInt(pthread_self()) }
        var nextTurn = ContinuousClock.now
        var sockets = [Int32](repeating: 0, count: 64)
        var flags = [Int32](repeating: 0, count: 64)
        while true {
            let (poked, stopping, waiters) = control.withLock { control in
                defer {
                    control.poked = false
                    if control.stopping {
                        control.turnsEnded = true
                        control.stopWaiters = []
                    }
                }
                return (control.poked, control.stopping, control.stopWaiters)
            }
            for waiter in waiters { waiter.resume() }
            let due = poked || endedSinceTurn || ContinuousClock.now >= nextTurn
            endedSinceTurn = false
            if !stopping, due, let turn {
                turn()
            }
            if due { nextTurn = ContinuousClock.now + interval }
            let inbox = control.withLock { control in
                defer { control.inbox = [] }
                return control.inbox
            }
            for request in inbox { add(Transfer(request)) }
            if stopping && transfers.isEmpty && control.withLock({ $0.inbox.isEmpty }) { break }

            // Wait for a ready socket, a poke, libcurl's timer or the next turn, whichever comes first.
            let now = ContinuousClock.now
            var wait = endedSinceTurn ? .zero : stopping ? Duration.seconds(1) : max(.zero, nextTurn - now)
            if let deadline = poller.timerDeadline { wait = min(wait, max(.zero, deadline - now)) }
            let millis = Int32(clamping: (wait.components.seconds * 1000) + Int64((wait.components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000))
            let count = fs_epoll_wait(poller.epoll, &sockets, &flags, 64, millis)
            if count < 0 && errno != EINTR {
                // No epoll set (it could not be made): every transfer failed at its start; only turns are left.
                Thread.sleep(forTimeInterval: Double(max(1, millis)) / 1000)
            }
            var running: Int32 = 0
            if count > 0, let multi {
                for index in 0..<Int(count) {
                    if sockets[index] == wakeFD {
                        fs_eventfd_drain(wakeFD)
                    } else {
                        _ = curl_multi_socket_action(multi, sockets[index], flags[index], &running)
                    }
                }
            }
            if let deadline = poller.timerDeadline, ContinuousClock.now >= deadline, let multi {
                poller.timerDeadline = nil
                _ = curl_multi_socket_action(multi, fs_curl_socket_bad(), 0, &running)
            }
            collectFinished()
            if turn == nil, endedSinceTurn {
                endedSinceTurn = false
                ended?()
            }
        }
        // Stopped and nothing under way: the kept handles and connections close with the sender.
    }

    /// Adds `transfer` to the multi handle on an easy handle of its URL (an idle one, or a new one).
    private func add(_ transfer: Transfer) {
        guard let multi, poller.epoll >= 0, wakeFD >= 0 else {
            finish(transfer, with: Response(status: nil, error: "libcurl could not start", millis: 0))
            return
        }
        let handle = idle[transfer.request.url]?.popLast() ?? CurlHandle()
        transfer.handle = handle
        guard let curl = handle.pointer, let shared = handle.sharedHeaders else {
            finish(transfer, with: Response(status: nil, error: "libcurl could not start", millis: 0))
            return
        }
        let context = handle.context
        if !handle.prepared {
            context.limit = options.maxResponseBytes
            context.allowPrivate = options.allowPrivateAddresses
            prepare(curl, url: transfer.request.url, context: context)
            handle.prepared = true
        }
        context.reset()
        // The attempt's own headers, then the shared ones (linked for the attempt, unlinked before the free).
        let prepared = Date()
        transfer.prepared = prepared
        let headers = transfer.request.headers(prepared)
        var last: UnsafeMutablePointer<curl_slist>?
        for line in headers {
            guard let node = curl_slist_append(nil, line) else {
                finish(transfer, with: Response(status: nil, error: "libcurl could not start", millis: 0))
                return
            }
            if let last { last.pointee.next = node } else { transfer.headerList = node }
            last = node
        }
        transfer.lastHeader = last
        last?.pointee.next = shared
        _ = fs_curl_setopt_pointer(curl, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(transfer.headerList ?? shared))
        // The body is sent from the transfer's own copy of its bytes (CURLOPT_POSTFIELDS does not copy), alive
        // until the transfer ends.
        _ = fs_curl_setopt_offset(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(transfer.bodyCount))
        _ = fs_curl_setopt_pointer(curl, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(transfer.body.baseAddress))
        transfer.started = .now
        transfer.added = Date()
        guard curl_multi_add_handle(multi, curl) == CURLM_OK else {
            finish(transfer, with: Response(status: nil, error: "libcurl could not start", millis: 0))
            return
        }
        transfers[curl] = transfer
    }

    /// Reads the transfers that ended, takes each out of the multi handle and calls its `finished`.
    private func collectFinished() {
        guard let multi else { return }
        var easy: UnsafeMutableRawPointer?
        var code = CURLE_OK
        while fs_curl_multi_next_done(multi, &easy, &code) != 0 {
            guard let curl = easy, let transfer = transfers.removeValue(forKey: curl) else { continue }
            _ = curl_multi_remove_handle(multi, curl)
            let response = response(of: transfer, curl: curl, code: code)
            finish(transfer, with: response)
        }
    }

    /// Frees what `transfer` held, puts its handle back (one whose receiver never answered is dropped: a
    /// receiver that is down should not keep handles) and calls its `finished`.
    private func finish(_ transfer: Transfer, with response: Response) {
        if let handle = transfer.handle {
            if let curl = handle.pointer {
                _ = fs_curl_setopt_pointer(curl, CURLOPT_POSTFIELDS, nil)
                _ = fs_curl_setopt_pointer(curl, CURLOPT_HTTPHEADER, nil)
            }
            if response.status != nil, idle[transfer.request.url, default: []].count < keepPerURL {
                idle[transfer.request.url, default: []].append(handle)
            }
            transfer.handle = nil
        }
        transfer.lastHeader?.pointee.next = nil
        curl_slist_free_all(transfer.headerList)
        transfer.headerList = nil
        transfer.lastHeader = nil
        control.withLock { $0.open -= 1 }
        endedSinceTurn = true
        transfer.request.finished(response)
    }

    /// Sets what every attempt on `curl` shares (its URL's handle: handles are kept by URL), once.
    private func prepare(_ curl: UnsafeMutableRawPointer, url: String, context: CurlHandle.Context) {
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
            let context = Unmanaged<CurlHandle.Context>.fromOpaque(userdata).takeUnretainedValue()
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
            let context = Unmanaged<CurlHandle.Context>.fromOpaque(userdata!).takeUnretainedValue()
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

    /// What a finished transfer came to, with the timing trace's stamps.
    private func response(of transfer: Transfer, curl: UnsafeMutableRawPointer, code: CURLcode) -> Response {
        // The transfer's end, read first: the timing trace's stamps below count back from it.
        let end = Date()
        let elapsed = ContinuousClock.now - transfer.started
        let millis = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        var response = result(of: transfer, curl: curl, code: code, millis: millis)
        // The timing trace's stamps: libcurl's times run from its start of the transfer to the moment named
        // (`sent`: its pretransfer time, just before the request's first byte is sent), and its total to the end.
        var total = 0.0
        var pretransfer = 0.0
        _ = fs_curl_getinfo_double(curl, CURLINFO_TOTAL_TIME, &total)
        _ = fs_curl_getinfo_double(curl, CURLINFO_PRETRANSFER_TIME, &pretransfer)
        response.added = transfer.added
        response.prepared = transfer.prepared
        if total > 0 {
            response.curlStarted = end.addingTimeInterval(-total)
            if pretransfer > 0 { response.sent = end.addingTimeInterval(pretransfer - total) }
        }
        return response
    }

    /// The status or error of a finished transfer, from libcurl's result and its handle's context.
    private func result(of transfer: Transfer, curl: UnsafeMutableRawPointer, code: CURLcode, millis: Int) -> Response {
        guard let context = transfer.handle?.context else { return Response(status: nil, error: "libcurl could not start", millis: millis) }
        var status = 0
        _ = fs_curl_getinfo_long(curl, CURLINFO_RESPONSE_CODE, &status)
        if let refused = context.refused {
            return Response(
                status: nil,
                error: "refused to connect to \(refused): a loopback, link-local, private or reserved address (the server's operator may allow them with serve --webhooks-allow-private-addresses)",
                millis: millis)
        }
        guard code == CURLE_OK || (code == CURLE_WRITE_ERROR && context.truncated && status > 0) else {
            let message = String(cString: context.errorBuffer)
            let detail = message.isEmpty ? String(cString: curl_easy_strerror(code)) : message
            let kind = code == CURLE_OPERATION_TIMEDOUT ? "timed out" : code == CURLE_COULDNT_CONNECT ? "connection failed" : "request failed"
            return Response(status: nil, error: "\(kind): \(detail)", millis: millis)
        }
        guard (200..<300).contains(status) else {
            let answer = String(decoding: context.body.prefix(200), as: UTF8.self)
                .filter { !$0.isNewline }
            let redirect = (300..<400).contains(status) ? " (redirects are not followed)" : ""
            return Response(status: status, error: "HTTP \(status)\(redirect)\(answer.isEmpty ? "" : ": \(answer)")", millis: millis)
        }
        return Response(status: status, error: nil, millis: millis)
    }
    #else
    private func loop(_ turn: (@Sendable () -> Void)?, ended: (@Sendable () -> Void)?) {
        setCurrentThreadName(name)
        // Without libcurl every attempt fails at once; turns still run so the service gives its claims back.
        while true {
            let (stopping, waiters, inbox) = control.withLock { control in
                defer {
                    control.inbox = []
                    control.open = 0
                    if control.stopping { control.turnsEnded = true; control.stopWaiters = [] }
                }
                return (control.stopping, control.stopWaiters, control.inbox)
            }
            for waiter in waiters { waiter.resume() }
            if stopping { return }
            turn?()
            for request in inbox {
                request.finished(Response(status: nil, error: "this server was built without libcurl and cannot deliver webhooks", millis: 0))
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
    #endif
}

#if canImport(CCurl)
/// What libcurl's socket and timer callbacks of a sender's multi handle reach (on the sender's thread).
private final class Poller: @unchecked Sendable {
    let epoll: Int32
    var timerDeadline: ContinuousClock.Instant?

    init(epoll: Int32) {
        self.epoll = epoll
    }
}
#endif

/// One attempt under way on a sender thread: its request and what it holds until it ended.
private final class Transfer: @unchecked Sendable {
    let request: WebhookSender.Request
    /// The body's bytes, owned by the transfer (libcurl reads them in place).
    let body: UnsafeMutableBufferPointer<UInt8>
    let bodyCount: Int
    var handle: CurlHandle?
    #if canImport(CCurl)
    var headerList: UnsafeMutablePointer<curl_slist>?
    var lastHeader: UnsafeMutablePointer<curl_slist>?
    #endif
    var started = ContinuousClock.now
    /// When its headers were made and when it was added to the multi handle (the timing trace's `started` and
    /// `added`).
    var prepared: Date?
    var added: Date?

    init(_ request: WebhookSender.Request) {
        self.request = request
        let bytes = request.body.utf8
        bodyCount = bytes.count
        body = .allocate(capacity: max(1, bytes.count))
        _ = body.initialize(from: bytes)
    }

    deinit {
        body.deallocate()
    }
}

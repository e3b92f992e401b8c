import Foundation
import Synchronization
#if canImport(CCurl)
import CCurl
#endif

/// Sends webhook deliveries over libcurl's multi interface, every attempt of the server driven by a fixed few
/// threads of the sender's own (``threads``, each with its multi handle; never one of Swift's cooperative
/// threads): an attempt is a transfer added to one of them in turn (``begin(_:)``: a burst is dealt out in one
/// hand-over and one wake-up per thread, and each thread makes its attempts' headers — the signing — itself), and
/// each thread waits on an epoll set of its transfers' sockets and libcurl's timer (`curl_multi_socket_action`,
/// so a wake-up touches only the sockets that are ready, not every transfer), reads its finished transfers
/// (`curl_multi_info_read`) and calls each one's `finished` on that thread. A burst's attempts are so added at
/// once and run side by side without a thread, a wake-up or a context switch each; a slow receiver's transfers
/// just sit in their multi handle.
///
/// Outbound requests made on an admin's word: no redirect followed, http and https only, no proxy from the
/// environment, each attempt bounded by ``WebhookOptions/timeout``, at most ``WebhookOptions/maxResponseBytes``
/// of the answer read, and, unless the operator allows them, no connection to a loopback, link-local, private or
/// otherwise non-public address — checked on the address libcurl is about to connect to (its open-socket
/// callback), after resolution, so a public name that resolves to a private address is refused too.
///
/// Connections are kept in the multi handles' caches (up to ``keptConnections`` in all, the oldest idle one
/// closed beyond), so a receiver that answers meets one connection per delivery under way at once rather than one per
/// delivery; easy handles are kept per URL (up to `keepPerURL` idle each) with their options set once.
///
/// The first thread also runs the delivery service's turn (what starts next): when poked (``poke()``, from any
/// thread, without waiting), after transfers ended on any thread (their slots are free), and at least every
/// `interval`. Several threads rather than one: on a core the pushes keep busy, the scheduler shares the CPU by
/// thread, and one thread's share left a burst's transfers waiting (BENCHMARKS.md, webhook section).
final class WebhookSender: Sendable {
    /// What one attempt came to.
    struct Response: Sendable, Hashable {
        /// The HTTP status, when the receiver answered.
        var status: Int?
        /// Why it failed; nil for a 2xx.
        var error: String?
        var millis: Int
        /// For the timing trace: when the sender's thread added the transfer to its multi handle, when libcurl began
        /// it, and when it was about to send the request (the last two counted back from the transfer's end with libcurl's
        /// own timings; nil when it never got there).
        var added: Date?
        /// When the thread made the attempt's headers (``Request/headers``), just before adding it.
        var prepared: Date?
        var curlStarted: Date?
        var sent: Date?
        var delivered: Bool { error == nil }
    }

    /// How many threads (and multi handles) drive the attempts.
    static let threads = 4

    let options: WebhookOptions
    /// The most idle connections kept open, all threads and endpoints together.
    let keptConnections: Int
    private let loops: [SenderLoop]
    private let next = Mutex(0)

    /// A sender keeping up to `keepPerURL` idle easy handles per URL and thread and `4 × keepPerURL` idle
    /// connections in all; its first thread runs the turn at least every `interval` once started. Its threads are
    /// named `name`.
    init(options: WebhookOptions, keepPerURL: Int, name: String = "fs-webhook-send", interval: Duration = .seconds(1), threads: Int = WebhookSender.threads) {
        self.options = options
        let count = max(1, threads)
        keptConnections = 4 * max(1, keepPerURL)
        loops = (0..<count).map { _ in
            SenderLoop(
                options: options, keepPerURL: max(1, keepPerURL), keptConnections: max(1, 4 * max(1, keepPerURL) / count), name: name,
                interval: interval)
        }
    }

    /// Starts the sender's threads; `turn` runs on the first at once, then on each poke, after transfers ended,
    /// and at least every `interval`, until ``stop()``. A second start does nothing.
    func start(turn: @escaping @Sendable () -> Void) {
        let first = loops[0]
        first.start(turn: turn, ended: nil)
        for loop in loops.dropFirst() {
            loop.start(turn: nil, ended: { first.poke() })
        }
    }

    /// Asks for a turn as soon as the first thread is free; from any thread, never waits. Pokes that come during
    /// a turn make one more turn, not one each.
    func poke() {
        loops[0].poke()
    }

    /// No turn runs any more once this returns (the one under way ended); the threads go on with the transfers
    /// under way (each bounded by the timeout), call their `finished`, then end and close their connections.
    func stop() async {
        for loop in loops { await loop.stop() }
    }

    /// One attempt asked of the sender: `body` posted to `url` with the headers `headers` makes (whole lines,
    /// `Name: value`), and what to call with its response.
    struct Request: Sendable {
        var url: String
        var body: String
        /// Called on the thread that adds the transfer, just before, with the time (so the work a request's
        /// headers take, such as signing, is done by that thread, not by the one asking).
        var headers: @Sendable (Date) -> [String]
        var finished: @Sendable (Response) -> Void
    }

    /// Starts an attempt: posts `body` to `url` with `headers` (whole lines, `Name: value`) on a kept connection
    /// when there is one, on the next of the sender's threads in turn, and calls `finished` with its response on
    /// that thread. From any thread; from a turn it joins the transfers right after the turn.
    func begin(url: String, body: String, headers: [String], finished: @escaping @Sendable (Response) -> Void) {
        begin([Request(url: url, body: body, headers: { _ in headers }, finished: finished)])
    }

    /// Starts `requests`, dealt to the sender's threads in turn: each thread gets its share in one hand-over and
    /// one wake-up, and makes each request's headers, adds its transfer and calls its `finished` on that thread.
    /// From any thread; the calling thread's own share (from a turn) joins its transfers right after the turn.
    func begin(_ requests: [Request]) {
        guard !requests.isEmpty else { return }
        let first = next.withLock { next in
            defer { next = (next + requests.count) % loops.count }
            return next
        }
        var shares = [[Request]](repeating: [], count: loops.count)
        for (offset, request) in requests.enumerated() {
            shares[(first + offset) % loops.count].append(request)
        }
        for (loop, share) in zip(loops, shares) where !share.isEmpty {
            loop.begin(share)
        }
    }

    /// Attempts added and not yet finished (for tests).
    var transfersOpen: Int { loops.reduce(0) { $0 + $1.transfersOpen } }
}

/// One of the sender's threads with its multi handle: the transfers added to it, its epoll set, its kept easy
/// handles; the first one also runs the delivery service's turns.
private final class SenderLoop: @unchecked Sendable {
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
        transfer.prepared = Date()
        let headers = transfer.request.headers(transfer.prepared!)
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

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

    /// Starts `requests` (each posts its `body` to its `url` on a kept connection when there is one), dealt to the sender's threads in turn: each thread gets its share in one hand-over and
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

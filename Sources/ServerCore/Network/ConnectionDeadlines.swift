/// When a slow or idle HTTP/1 connection must be closed: the pure rules behind ``ConnectionGuard``.
///
/// A connection is always in one phase, and each phase but `responding` has a deadline:
/// - `awaitingHead`: from the connection's start, or from the first byte of a later request, the complete
///   request head must arrive within `headerTimeout` (bytes trickled one at a time do not extend it);
/// - `readingBody`: once the head is in, the body must arrive within `bodyTimeout` plus one second for
///   every `bodyMinBytesPerSecond` bytes received, so a slow but steady link finishes a large body while a
///   trickle that stays below that rate is cut off;
/// - `responding`: the server's own work has no deadline here;
/// - `idle`: between requests on a kept-alive connection, the next request must start within `idleTimeout`.
///
/// Whatever the phase, a client that stops reading what the server sends (its socket stays full) is cut
/// off once it has not taken anything for `sendTimeout`.
struct ConnectionDeadlines<Instant: InstantProtocol> where Instant.Duration == Duration {
    enum Phase: Equatable {
        case awaitingHead(since: Instant, sawBytes: Bool)
        case readingBody(since: Instant, received: Int)
        case responding
        case idle(since: Instant)
    }

    /// Why a connection is closed.
    enum Expiry: String, Equatable {
        case header, body, idle, send
    }

    let headerTimeout: Duration
    let bodyTimeout: Duration
    let bodyMinBytesPerSecond: Int
    let idleTimeout: Duration
    let sendTimeout: Duration

    private(set) var phase: Phase
    /// Since when the client has not taken what the server writes (nil: it keeps up).
    private(set) var stalledSince: Instant?
    /// Requests whose head arrived and whose response has not been completely written.
    private(set) var requestsInFlight = 0
    /// Whether the request being read has sent its whole body.
    private(set) var bodyComplete = true

    init(headerTimeout: Duration, bodyTimeout: Duration, bodyMinBytesPerSecond: Int, idleTimeout: Duration, sendTimeout: Duration, now: Instant) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.bodyMinBytesPerSecond = max(1, bodyMinBytesPerSecond)
        self.idleTimeout = idleTimeout
        self.sendTimeout = sendTimeout
        self.phase = .awaitingHead(since: now, sawBytes: false)
    }

    /// Raw bytes arrived (before they are parsed): a request starts on an idle connection.
    mutating func bytesArrived(now: Instant) {
        switch phase {
        case .idle: phase = .awaitingHead(since: now, sawBytes: true)
        case .awaitingHead(let since, false): phase = .awaitingHead(since: since, sawBytes: true)
        default: break
        }
    }

    mutating func headReceived(now: Instant) {
        requestsInFlight += 1
        bodyComplete = false
        phase = .readingBody(since: now, received: 0)
    }

    mutating func bodyReceived(bytes: Int) {
        if case .readingBody(let since, let received) = phase { phase = .readingBody(since: since, received: received + bytes) }
    }

    mutating func bodyEnded() {
        bodyComplete = true
        phase = .responding
    }

    /// The response's last part was written; the connection goes idle when nothing else is in flight.
    mutating func responseEnded(now: Instant) {
        requestsInFlight = max(0, requestsInFlight - 1)
        if requestsInFlight == 0, bodyComplete { phase = .idle(since: now) }
    }

    /// The socket filled up (the client is not reading) or drained again.
    mutating func writabilityChanged(writable: Bool, now: Instant) {
        if writable { stalledSince = nil } else if stalledSince == nil { stalledSince = now }
    }

    /// The instant the current phase ends, and what runs out then (nil: no deadline).
    var deadline: (at: Instant, expiry: Expiry)? {
        let phaseDeadline: (at: Instant, expiry: Expiry)? =
            switch phase {
            case .awaitingHead(let since, _): (since.advanced(by: headerTimeout), .header)
            case .readingBody(let since, let received):
                (since.advanced(by: bodyTimeout + .seconds(Double(received) / Double(bodyMinBytesPerSecond))), .body)
            case .responding: nil
            case .idle(let since): (since.advanced(by: idleTimeout), .idle)
            }
        guard let stalledSince else { return phaseDeadline }
        let sendDeadline = stalledSince.advanced(by: sendTimeout)
        guard let phaseDeadline, phaseDeadline.at <= sendDeadline else { return (sendDeadline, .send) }
        return phaseDeadline
    }

    /// What has run out at `now`, if anything.
    func expired(now: Instant) -> Expiry? {
        guard let deadline, now >= deadline.at else { return nil }
        return deadline.expiry
    }
}

import Logging
import NIOCore
import NIOHTTP1

/// Closes HTTP/1 connections that are too slow or idle too long (``ConnectionDeadlines``), and connections
/// whose request body will not be read because the response went out first (an early 413 or 401): those
/// responses carry `Connection: close`, the server stops sending, discards what still arrives for a moment
/// so the client can read the answer, then closes.
///
/// Two handlers share one guard: ``ConnectionGuard`` itself sits first in the pipeline and sees raw bytes
/// (a request starting, a header trickling in); ``ConnectionGuard/MessageObserver`` sits right after the
/// HTTP decoder and sees request and response parts. Both run on the channel's event loop.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias Clock = ContinuousClock

    /// How long a connection whose body will not be read lingers after its response, discarding input.
    static let lingerTimeout: Duration = .seconds(2)

    private var deadlines: ConnectionDeadlines<Clock.Instant>
    private let onExpiry: @Sendable (ConnectionDeadlines<Clock.Instant>.Expiry) -> Void
    private let logger: Logger
    private var context: ChannelHandlerContext?
    private var timer: (task: Scheduled<Void>, at: Clock.Instant)?
    /// Set once the response to a request whose body was not read has been written.
    private var lingeringSince: Clock.Instant?
    private var closing = false

    init(limits: ServerLimits, logger: Logger, onExpiry: @escaping @Sendable (ConnectionDeadlines<Clock.Instant>.Expiry) -> Void) {
        self.deadlines = ConnectionDeadlines(
            headerTimeout: limits.headerTimeout, bodyTimeout: limits.bodyTimeout,
            bodyMinBytesPerSecond: limits.bodyMinBytesPerSecond, idleTimeout: limits.idleTimeout, sendTimeout: limits.sendTimeout, now: .now)
        self.onExpiry = onExpiry
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        armTimer()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.task.cancel()
        timer = nil
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Once the answer is out and the body is not wanted, what still arrives is dropped unparsed.
        guard lingeringSince == nil else { return }
        deadlines.bytesArrived(now: .now)
        armTimer()
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if lingeringSince != nil, event as? ChannelEvent == .inputClosed {
            close()
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        deadlines.writabilityChanged(writable: context.channel.isWritable, now: .now)
        armTimer()
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.task.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    // MARK: Events from the message observer

    fileprivate func headReceived() {
        deadlines.headReceived(now: .now)
        armTimer()
    }

    fileprivate func bodyReceived(bytes: Int) {
        deadlines.bodyReceived(bytes: bytes)
    }

    fileprivate func bodyEnded() {
        deadlines.bodyEnded()
        armTimer()
    }

    /// Whether the request being read has not sent its whole body (so its response must close).
    fileprivate var bodyUnread: Bool { !deadlines.bodyComplete }

    fileprivate func responseEnded(closing close: Bool) {
        deadlines.responseEnded(now: .now)
        if close {
            lingeringSince = .now
            self.context?.close(mode: .output, promise: nil)
        }
        armTimer()
    }

    // MARK: The timer

    private var currentDeadline: (at: Clock.Instant, expiry: ConnectionDeadlines<Clock.Instant>.Expiry?)? {
        if let lingeringSince { return (lingeringSince.advanced(by: Self.lingerTimeout), nil) }
        return deadlines.deadline.map { ($0.at, $0.expiry) }
    }

    /// Makes sure a check runs no later than the current deadline.
    private func armTimer() {
        guard let context, !closing, let deadline = currentDeadline?.at else { return }
        if let timer, timer.at <= deadline { return }
        timer?.task.cancel()
        let delay = Clock.now.duration(to: deadline)
        let nanoseconds = max(0, delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
        let task = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) { [self] in
            timer = nil
            check()
        }
        timer = (task, deadline)
    }

    private func check() {
        let now = Clock.now
        if let lingeringSince {
            if now >= lingeringSince.advanced(by: Self.lingerTimeout) { close() } else { armTimer() }
            return
        }
        guard let expiry = deadlines.expired(now: now) else {
            armTimer()
            return
        }
        onExpiry(expiry)
        logger.debug("Closing a slow connection", metadata: ["timeout": .string(expiry.rawValue), "remote": .string(context?.remoteAddress?.description ?? "?")])
        if expiry == .header, case .awaitingHead(_, true) = deadlines.phase, let context {
            // Part of a request arrived but not all of its head: say why before closing.
            let answer = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: answer))).assumeIsolated().whenComplete { [self] _ in close() }
            closing = true
            return
        }
        close()
    }

    private func close() {
        closing = true
        timer?.task.cancel()
        timer = nil
        context?.close(promise: nil)
    }

    /// Sees request and response parts, right after the HTTP decoder.
    final class MessageObserver: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias InboundOut = HTTPServerRequestPart
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = HTTPServerResponsePart

        private let guardHandler: ConnectionGuard
        /// The response being written answers a request whose body was not (all) read.
        private var closeAfterResponse = false

        init(_ guardHandler: ConnectionGuard) {
            self.guardHandler = guardHandler
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head: guardHandler.headReceived()
            case .body(let buffer): guardHandler.bodyReceived(bytes: buffer.readableBytes)
            case .end: guardHandler.bodyEnded()
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case .head(var head) where guardHandler.bodyUnread:
                closeAfterResponse = true
                head.headers.replaceOrAdd(name: "connection", value: "close")
                context.write(wrapOutboundOut(.head(head)), promise: promise)
            case .end:
                let close = closeAfterResponse
                closeAfterResponse = false
                context.write(data, promise: promise)
                context.flush()
                guardHandler.responseEnded(closing: close)
            default:
                context.write(data, promise: promise)
            }
        }
    }
}

import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// Hummingbird's HTTP/1 child channel with a ``ConnectionGuard`` added (first in the pipeline for raw
/// bytes, right after the HTTP decoder for request and response parts), and the connection cap enforced:
/// a connection accepted past the cap is closed at once (the listener stops accepting at the cap, but
/// accepts a few connections per wake-up, so a burst could otherwise slip past it).
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel
    let limits: ServerLimits
    let metrics: ServerMetrics
    let connections: ConnectionCap

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let limits = limits
        let metrics = metrics
        let connections = connections
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            guard !connections.isOver else {
                logger.debug("Connection refused: \(limits.maxConnections) connections are open (--max-connections)")
                channel.close(promise: nil)
                return value
            }
            let pipeline = channel.pipeline.syncOperations
            let guardHandler = ConnectionGuard(limits: limits, logger: logger) { metrics.recordSlowConnectionClosed($0.rawValue) }
            let decoder = try pipeline.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(ConnectionGuard.MessageObserver(guardHandler), position: .after(decoder.handler))
            try pipeline.addHandler(guardHandler, position: .first)
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with the slow-client timeouts of `limits` and the connection cap of `connections`.
    static func guardedHTTP1(limits: ServerLimits, metrics: ServerMetrics, connections: ConnectionCap) -> HTTPServerBuilder {
        .init { responder in
            GuardedHTTP1Channel(base: HTTP1Channel(responder: responder), limits: limits, metrics: metrics, connections: connections)
        }
    }
}

/// Counts open connections against `--max-connections` and reports the count as a metric. As the
/// listener's ``AvailableConnectionsDelegate`` (which sees every accepted connection open and close) it
/// stops accepting at the cap, so new connections wait in the listen backlog until one closes.
final class ConnectionCap: Sendable {
    let maximum: Int
    let metrics: ServerMetrics
    private let count = Mutex(0)

    init(maximum: Int, metrics: ServerMetrics) {
        self.maximum = maximum
        self.metrics = metrics
    }

    fileprivate func change(by delta: Int) {
        metrics.recordOpenConnections(count.withLock { count in
            count += delta
            return count
        })
    }

    var isFull: Bool { count.withLock { $0 >= maximum } }
    /// More connections are open than the cap allows (accepted in one burst): the newest must close.
    var isOver: Bool { count.withLock { $0 > maximum } }

    /// The listener's view of the cap.
    var delegate: some AvailableConnectionsDelegate { Delegate(cap: self) }

    private struct Delegate: AvailableConnectionsDelegate {
        let cap: ConnectionCap
        mutating func connectionOpened() { cap.change(by: 1) }
        mutating func connectionClosed() { cap.change(by: -1) }
        func isAcceptingNewConnections() -> Bool { !cap.isFull }
    }
}

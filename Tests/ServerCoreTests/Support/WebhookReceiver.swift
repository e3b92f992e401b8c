import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServerCore
import Synchronization

/// A webhook receiver on loopback: a real HTTP server (Hummingbird) that keeps every POST to `/hook` with its
/// headers, and checks each signature with the endpoint's secret as a receiver would.
final class WebhookReceiver: Sendable {
    struct Delivery: Sendable {
        var eventID: String
        var type: String
        var attempt: Int
        var signatureValid: Bool
        var body: String
        /// When it arrived, in milliseconds since 1970.
        var receivedAt: Int64
        /// The sender's port of the connection it came on: deliveries on one kept connection share it.
        var connectionPort: Int?

        /// The body as JSON.
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
        var record: [String: Any] { json["record"] as? [String: Any] ?? [:] }
    }

    let port: Int
    let secret: String
    private let received = Mutex<[Delivery]>([])
    private let task = Mutex<Task<Void, any Error>?>(nil)

    init(port: Int, secret: String) {
        self.port = port
        self.secret = secret
    }

    var deliveries: [Delivery] { received.withLock { $0 } }
    var url: String { "http://127.0.0.1:\(port)/hook" }

    /// The deliveries with distinct event ids, in the order each id first arrived.
    var events: [Delivery] {
        var seen = Set<String>()
        return deliveries.filter { seen.insert($0.eventID).inserted }
    }

    /// How many connections the deliveries so far came on.
    var connections: Int { Set(deliveries.map { $0.connectionPort ?? -1 }).count }

    /// Whether every delivery so far carried a signature that verifies with the secret.
    var allSignaturesValid: Bool { deliveries.allSatisfy { $0.signatureValid } }

    /// For each event, the milliseconds from its `occurredAt` (taken in the commit's transaction) to its first arrival.
    var latenciesMillis: [Int64] {
        events.compactMap { event in (event.json["occurredAt"] as? NSNumber).map { event.receivedAt - $0.int64Value } }
    }

    static var quietLogger: Logger {
        var logger = Logger(label: "receiver")
        logger.logLevel = .critical
        return logger
    }

    /// Starts listening on `port`; returns once it accepts connections.
    func start() async throws {
        let router = Router(context: ReceiverContext.self)
        router.post("hook") { [self] request, context -> HTTPResponse.Status in
            var request = request
            let body = try await request.collectBody(upTo: 16 * 1024 * 1024)
            let text = String(buffer: body)
            let signature = request.headers[HTTPField.Name("FieldSheet-Signature")!] ?? ""
            let delivery = Delivery(
                eventID: request.headers[HTTPField.Name("FieldSheet-Event-Id")!] ?? "",
                type: request.headers[HTTPField.Name("FieldSheet-Event-Type")!] ?? "",
                attempt: Int(request.headers[HTTPField.Name("FieldSheet-Delivery-Attempt")!] ?? "") ?? 0,
                signatureValid: WebhookSignature.verify(header: signature, secret: self.secret, body: Array(text.utf8)),
                body: text, receivedAt: Int64(Date().timeIntervalSince1970 * 1000), connectionPort: context.remotePort)
            self.received.withLock { $0.append(delivery) }
            return .noContent
        }
        let running = AsyncStream<Void>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { _ in running.continuation.yield() }, logger: Self.quietLogger)
        task.withLock { $0 = Task { try await app.runService() } }
        for await _ in running.stream { break }
    }

    /// Stops listening (connections are refused afterwards).
    func stop() async {
        guard let running = task.withLock({ current -> Task<Void, any Error>? in defer { current = nil }; return current }) else { return }
        running.cancel()
        _ = try? await running.value
    }
}

/// The receiver's request context: the core context and the port the request's connection came from.
struct ReceiverContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let remotePort: Int?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remotePort = source.channel.remoteAddress?.port
    }
}

import Foundation
import SyncCore

extension SyncEngine {
    /// Longest wait the server grants one request, in seconds.
    public static let maxWaitSeconds = 60

    /// Waits until the server holds a change this device has not pulled yet, without polling: one
    /// long-poll request (`GET …/changes?after=<stored cursor>&wait=S&client=<device id>`) that the server answers as soon as
    /// such a change commits. Nothing is applied; the next ``sync(progress:)`` does that.
    ///
    /// Returns true when a change is waiting (at once if one already was), false when `timeout` passed
    /// with none. `timeout` is rounded up to whole seconds and kept within 1…``maxWaitSeconds``; keep it
    /// under the transport's stall timeout (30 s for ``CurlTransport`` by default), which a silent wait
    /// would otherwise trip.
    ///
    /// The request is not retried: a failure throws ``SyncError`` at once (`unreachable`,
    /// `unauthorized`, …) so the caller can back off before waiting again.
    public func waitForChanges(timeout: TimeInterval) async throws -> Bool {
        try await waitForChangesAnswer(timeout: timeout).changed
    }

    /// What the server answered one long-poll (``SyncEngine/waitForChangesAnswer(timeout:)``).
    public struct WaitAnswer: Sendable, Hashable {
        /// Whether a change this device has not pulled yet is waiting.
        public var changed: Bool
        /// How long the server asks the device to wait before it asks again (its `Retry-After`, given when
        /// it did not hold the request: this token or device already holds as many waiting pulls as it may).
        public var retryAfter: Duration?

        /// An answer saying whether a change waits, and how long to wait before asking again.
        public init(changed: Bool, retryAfter: Duration?) {
            self.changed = changed
            self.retryAfter = retryAfter
        }
    }

    /// ``waitForChanges(timeout:)``, also telling the server's `Retry-After` when it answered without holding
    /// the request, so the caller waits that long before it asks again.
    public func waitForChangesAnswer(timeout: TimeInterval) async throws -> WaitAnswer {
        let cursor = try await storage("reading the sync cursor") { try await store.syncCursor() }
        let seconds = min(Self.maxWaitSeconds, max(1, Int(timeout.rounded(.up))))
        var once = configuration
        once.retry.maxAttempts = 1
        let engine = SyncEngine(store: store, transport: transport, configuration: once, logger: logger)
        // `client` names this device, so the server's cap on waiting pulls per device can apply to it.
        var query = URLComponents()
        query.queryItems = [
            URLQueryItem(name: "after", value: String(cursor)), URLQueryItem(name: "limit", value: "1"),
            URLQueryItem(name: "wait", value: String(seconds)), URLQueryItem(name: "client", value: store.deviceID),
        ]
        let request = TransportRequest(method: "GET", url: configuration.url("changes?\(query.percentEncodedQuery ?? "")"))
        return try await engine.send(request, doing: "waiting for changes", SyncProgressTracker { _ in }) { response in
            let page = try PullPageReader.read(Array(response.body)) { _ in }
            let retryAfter = response.headers["retry-after"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { Duration.seconds($0) }
            return WaitAnswer(changed: page.count > 0, retryAfter: retryAfter)
        }
    }
}

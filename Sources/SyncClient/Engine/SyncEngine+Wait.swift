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
        let page: PullPage = try await engine.get("changes?\(query.percentEncodedQuery ?? "")", doing: "waiting for changes", SyncProgressTracker { _ in })
        return !page.changes.isEmpty
    }
}

import Foundation
import Hummingbird
import ServiceLifecycle
import ServerStorage

/// `GET …/changes?after=C&wait=S`: a pull that finds nothing new for its caller holds the request until a
/// change the caller may see commits, or `S` seconds pass (then it answers the usual empty page).
///
/// No polling on the request's side: the pull sleeps on the storage's ``ChangeNotifier``, which this
/// process's pushes wake once committed and which hears other processes through the storage
/// (PostgreSQL `LISTEN`; for SQLite, one shared read of the counter row per interval while pulls wait).
/// A waiting pull woken by a change it may not see (another collector's draft) waits again until its
/// deadline. When the client goes away, the wait ends and its registration is dropped.
extension SyncController {
    /// Longest wait a pull may ask for, in seconds.
    static let maxWaitSeconds: Int64 = 60

    /// A pull's rows, and when it was answered at once instead of held (a cap of ``HeldPolls`` reached, or
    /// the server stopping), the seconds to send as `Retry-After`.
    struct WaitedPage: Sendable {
        var page: FeedPage
        var retryAfter: Int?
    }

    /// The rows `query` finds; when they are empty and the request asks to `wait`, the rows found once
    /// something the query sees has committed, or empty rows at the deadline. A wait past the caps of
    /// ``HeldPolls`` is not held: the rows found at once, with `retryAfter`. A server stopping
    /// (``ChangeNotifier/stop()``) ends every wait at once with the rows it has. `device` is the pull's
    /// `client`, already checked: the per-device cap counts it.
    func waitingForChanges(
        _ request: Request, projectID: Int64, device: String?, query: @escaping @Sendable () async throws -> FeedPage
    ) async throws -> WaitedPage {
        let seconds = try Self.integer(request, "wait", default: 0, range: 0...Self.maxWaitSeconds)
        guard seconds > 0 else { return WaitedPage(page: try await query()) }
        let token = request.headers[.authorization].map { AccessToken.hash($0).base64EncodedString() } ?? ""
        let ticket: HeldPolls.Ticket
        switch services.heldPolls.enter(token: token, device: device) {
        case .success(let granted):
            ticket = granted
        case .failure(let refusal):
            services.metrics.recordHeldPollRefused()
            return WaitedPage(page: try await query(), retryAfter: refusal == .stopping ? nil : services.limits.heldPollRetryAfterSeconds)
        }
        defer { services.heldPolls.leave(ticket) }
        let deadline = ContinuousClock.now + .seconds(seconds)
        let storage = services.storage
        // The position is read before the query: a change committing in between is either in the rows or
        // past the position, so it wakes the wait below.
        let position = try await storage.lastSequence(projectID: projectID)
        let first = try await query()
        guard first.records.isEmpty else { return WaitedPage(page: first) }
        do {
            // The server's graceful shutdown (SIGTERM, SIGINT) reaches the request's task: it stops the
            // notifier, which ends this wait and every other at once, instead of holding the shutdown for
            // up to a minute.
            return WaitedPage(page: try await withGracefulShutdownHandler {
                try await request.cancellingWhenClientLeaves {
                    var seen = position
                    while await storage.changes.wait(projectID: projectID, past: seen, until: deadline) {
                        seen = try await storage.lastSequence(projectID: projectID)
                        let rows = try await query()
                        if !rows.records.isEmpty { return rows }
                    }
                    return first
                }
            } onGracefulShutdown: {
                storage.changes.stop()
            })
        } catch is CancellationError {
            return WaitedPage(page: first)
        }
    }
}

extension Request {
    /// Runs `operation`, cancelling it if the client closes the connection first.
    ///
    /// Hummingbird does this only for a request whose body is still the connection's stream (it traps on
    /// any other, such as the in-memory requests of its router tests), so other requests run `operation`
    /// as is. The connection is closed after the response.
    func cancellingWhenClientLeaves<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        guard body.isConnectionStream else { return try await operation() }
        return try await body.consumeWithCancellationOnInboundClose { _ in try await operation() }
    }
}

extension RequestBody {
    /// Whether the body is the connection's own stream of request parts (Hummingbird keeps which in
    /// a private case; reading it by reflection, an unknown shape answers false, the safe side).
    var isConnectionStream: Bool {
        guard let backing = Mirror(reflecting: self).children.first(where: { $0.label == "_backing" })?.value else { return false }
        return Mirror(reflecting: backing).children.first?.label == "nioAsyncChannelRequestBody"
    }
}

import DraftStore
import FormModel
import Foundation
import SyncCore

extension SyncEngine {
    /// `GET …/v1/projects/{project}/{path}`, decoded.
    func get<T: Decodable>(_ path: String, doing: String, _ progress: SyncProgressTracker) async throws -> T {
        try await send(TransportRequest(method: "GET", url: configuration.url(path)), doing: doing, progress)
    }

    /// Sends a request until the server answers, retrying lost connections, timeouts, 429 and 5xx with
    /// exponential backoff and jitter, within the retry policy's attempts and deadline. Every request the
    /// engine sends is safe to repeat (pulls read; pushes carry frozen mutation ids). A TLS failure is
    /// not retried (``SyncError/Code/tls``).
    func send<T: Decodable>(_ request: TransportRequest, doing: String, _ progress: SyncProgressTracker) async throws -> T {
        try await send(request, doing: doing, progress) { try JSONDecoder().decode(T.self, from: $0) }
    }

    /// Sends a request as above and reads a 2xx body with `read`. A body `read` cannot read is retried;
    /// a `SyncError` it throws (the device database failed) ends the request.
    func send<T>(_ request: TransportRequest, doing: String, _ progress: SyncProgressTracker, read: (Data) async throws -> T) async throws -> T {
        try await send(request, doing: doing, progress, readResponse: { try await read($0.body) })
    }

    /// Sends a request as above and reads a 2xx response (headers and body) with `readResponse`.
    func send<T>(_ request: TransportRequest, doing: String, _ progress: SyncProgressTracker, readResponse read: (TransportResponse) async throws -> T) async throws -> T {
        var request = request
        request.headers["Authorization"] = "Bearer \(configuration.token)"
        request.headers["Accept"] = "application/json"
        if request.body != nil { request.headers["Content-Type"] = "application/json" }
        let policy = configuration.retry
        let started = Date()
        var attempt = 0
        while true {
            attempt += 1
            try Task.checkCancellation()
            var failure = ""
            var finalError = SyncError(.unreachable, "")
            do {
                let response = try await transport.send(request)
                if (200..<300).contains(response.status) {
                    do {
                        return try await read(response)
                    } catch let error as SyncError {
                        throw error
                    } catch is CancellationError {
                        throw CancellationError()
                    } catch {
                        // A body cut short on a connection without length framing looks complete to
                        // libcurl; every request here is safe to repeat, so it is retried like a lost one.
                        failure = "unreadable answer (\(response.body.count) bytes)"
                        finalError = SyncError(.serverError, "The server's answer while \(doing) could not be read (\(error)). Is \(configuration.serverURL) a FieldSheet server? Your changes stay queued.")
                    }
                } else {
                    let problem = try? JSONDecoder().decode(ProblemDetails.self, from: response.body)
                    finalError = SyncError.from(status: response.status, problem: problem, doing: doing)
                    if finalError.code == .signedOut {
                        // Kept in the device database, so `fieldsheet status` and the app can say so offline.
                        try? await store.setSignedOut(true)
                    }
                    guard [408, 429, 500, 502, 503, 504].contains(response.status) else { throw finalError }
                    failure = "HTTP \(response.status)"
                }
            } catch let error as TransportError where error.kind == .tls {
                // Not a network fault: trying again would fail the same way.
                throw SyncError(.tls, "The secure connection to \(configuration.serverURL) failed while \(doing): \(error.description) Your changes stay queued.")
            } catch let error as TransportError {
                failure = error.description
                finalError = SyncError(.unreachable, "Could not reach the server at \(configuration.serverURL) while \(doing), after \(attempt) attempt\(attempt == 1 ? "" : "s"): \(error.description) Your changes stay queued; run `fieldsheet sync` again when the server can be reached.")
            }
            let delay = policy.delay(beforeRetry: attempt)
            guard attempt < policy.maxAttempts, Date().timeIntervalSince(started) + delay <= policy.deadline else {
                logger.notice("Giving up", metadata: ["doing": "\(doing)", "attempts": "\(attempt)", "reason": "\(failure)"])
                throw finalError
            }
            logger.info("Retrying", metadata: ["doing": "\(doing)", "attempt": "\(attempt)", "reason": "\(failure)", "delay": "\(delay)"])
            progress.retrying("\(failure); retrying in \(String(format: "%.1f", delay)) s")
            try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
        }
    }
}

extension SyncEngine {
    /// Checks the login against the server and stores the project's forms: the first thing a device
    /// does after `fieldsheet login`. Throws `SyncError` (`unauthorized`, `unreachable`…).
    /// It also registers the device's signing key with the login's token when the server does not hold it yet
    /// (docs/signed-submissions.md).
    public func checkLogin() async throws {
        let progress = SyncProgressTracker { _ in }
        try await fetchForms(progress)
        try await registerSigningKey(progress)
        try await storage("noting the login") { try await store.setSignedOut(false) }
    }

    /// Sends the device's public signing key to `POST …/device-key` unless this login (server and token) holds
    /// it already, as noted in the device database; the server keeps it with the token, and from then on
    /// refuses that token's pushes unless each mutation carries a valid signature. A token that holds another
    /// key is refused (409, `device-key-mismatch`): the device must log in again with a new code.
    func registerSigningKey(_ progress: SyncProgressTracker) async throws {
        let fingerprint = SigningKeyRegistration.fingerprint(serverURL: configuration.serverURL, token: configuration.token)
        guard try await storage("reading the signing key", { try await store.signingKeyRegistration() }) != fingerprint else { return }
        let publicKey = try await storage("making the device's signing key") { try await store.signingPublicKey() }
        var writer = JSONWriter(capacity: 80)
        writer.beginObject()
        writer.key("publicKey")
        writer.string(publicKey)
        writer.endObject()
        try await send(TransportRequest(method: "POST", url: configuration.url("device-key"), body: Data(writer.bytes)),
                       doing: "registering this device's signing key", progress, read: { _ in () })
        try await storage("noting the signing key's registration") { try await store.setSigningKeyRegistered(fingerprint) }
    }

    /// A pull or push request with what the device reports about itself (`FieldSheet-Waiting`: the records
    /// waiting to be sent; `FieldSheet-Device`: this device database's id), which the server shows the project's
    /// admin beside the device's last sync.
    func reporting(_ request: TransportRequest) async -> TransportRequest {
        var request = request
        if let waiting = try? await store.queuedRecordCount() { request.headers["FieldSheet-Waiting"] = String(waiting) }
        request.headers["FieldSheet-Device"] = store.deviceID
        return request
    }
}

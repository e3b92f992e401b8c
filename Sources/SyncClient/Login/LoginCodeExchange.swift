import DraftStore
import Foundation
import FormModel
import SyncCore

extension DeviceLogin {
    /// Exchanges a one-time login code from the project's admin (`POST /v1/login`) for this device's own token,
    /// and returns the login for the server, the code's project and that token (not yet saved: ``save(in:)``).
    ///
    /// With `store`, the device's public signing key (made now when it has none: `DraftStore.signingPublicKey()`)
    /// goes with the code, and the server keeps it with the new token (docs/signed-submissions.md); without it,
    /// the key is registered by ``SyncEngine/checkLogin()`` or the first push.
    ///
    /// A code works once: the request is not retried, since a retry after a lost answer would find it used.
    /// Throws ``SyncError``: `unauthorized` with the server's reason (an unknown, used or expired code),
    /// `refused` (too many failed codes from this address: the wait is in the message), `unreachable` or `tls`.
    ///
    /// ```swift
    /// import SyncClient
    ///
    /// let login = try await DeviceLogin.exchange(code: "K7QM3-XW9TP", serverURL: "https://sync.example.org",
    ///                                            deviceName: "tablet 4", transport: try makeDefaultTransport())
    /// try login.save(in: appSupportURL)
    /// ```
    public static func exchange(
        code: String, serverURL: String, deviceName: String, transport: any HTTPTransport, caFile: String? = nil, store: DraftStore? = nil
    ) async throws -> DeviceLogin {
        struct Answer: Decodable {
            var token: String
            var project: String
        }
        var base = serverURL
        while base.hasSuffix("/") { base.removeLast() }
        var writer = JSONWriter(capacity: 96)
        writer.beginObject()
        writer.key("code")
        writer.string(code)
        writer.key("deviceName")
        writer.string(String(deviceName.prefix(64)))
        let publicKey: String?
        do {
            publicKey = try await store?.signingPublicKey()
        } catch {
            throw SyncError(.storage, "The device database failed while making the device's signing key: \(error)")
        }
        if let publicKey {
            writer.key("publicKey")
            writer.string(publicKey)
        }
        writer.endObject()
        let request = TransportRequest(
            method: "POST", url: base + "/v1/login", headers: ["Content-Type": "application/json", "Accept": "application/json"],
            body: Data(writer.bytes))
        let response: TransportResponse
        do {
            response = try await transport.send(request)
        } catch let error as TransportError where error.kind == .tls {
            throw SyncError(.tls, "The secure connection to \(serverURL) failed while logging in: \(error.description)")
        } catch let error as TransportError {
            throw SyncError(.unreachable, "Could not reach the server at \(serverURL) while logging in: \(error.description) The code was not used; try again when the server can be reached.")
        }
        guard (200..<300).contains(response.status) else {
            let problem = try? JSONDecoder().decode(ProblemDetails.self, from: response.body)
            let detail = problem?.detail ?? "HTTP \(response.status)"
            switch response.status {
            case 401: throw SyncError(.unauthorized, detail)
            case 429: throw SyncError(.refused, detail)
            case 404, 405: throw SyncError(.serverError, "\(serverURL) does not take login codes (HTTP \(response.status)). Is it a FieldSheet server, and new enough?")
            default: throw SyncError.from(status: response.status, problem: problem, doing: "logging in with a code")
            }
        }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: response.body) else {
            throw SyncError(.serverError, "The server's answer to the login code could not be read. Is \(serverURL) a FieldSheet server?")
        }
        if let store, publicKey != nil {
            try? await store.setSigningKeyRegistered(SigningKeyRegistration.fingerprint(serverURL: base, token: answer.token))
        }
        return DeviceLogin(serverURL: base, project: answer.project, token: answer.token, caFile: caFile)
    }
}

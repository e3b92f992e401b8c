import Foundation
import Hummingbird
import ServerStorage
import SyncCore

/// `POST …/device-key`: a device registers the public half of its signing key with its token
/// (docs/signed-submissions.md). A login code's exchange carries the key already; this is for a device that
/// logged in before signatures existed. Only a device enrolled with a login code keeps a key: a token from
/// `fieldsheet-server user add` (`fieldsheet login --token`) may be shared by several homes and scripts, so its
/// registration is answered 204 and kept nowhere, and its pushes stay unsigned. The first key a token
/// registers stays: the same key again is accepted, another one is refused (409 `device-key-mismatch`), so
/// whoever holds a copied token cannot put their own key in place of the device's. A key kept is recorded in
/// the audit log (`device-key.registered`), and so is one refused (`device-key.refused`); the same key again and
/// a `user add` token's key, which is not kept, are not.
struct DeviceKeyController {
    let services: ServerServices

    struct KeyRequest: Decodable, Sendable {
        /// Base64 of the Ed25519 public key's 32 raw bytes.
        var publicKey: String
    }

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.post("device-key", use: register)
    }

    @Sendable func register(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        var request = request
        let body = try await request.decodeJSON(KeyRequest.self, limits: services.limits)
        guard let key = DeviceVerifyingKey(base64: body.publicKey) else {
            throw Problem.badRequest("publicKey is not an Ed25519 public key: send base64 of its 32 raw bytes (44 characters).", field: "publicKey")
        }
        guard let tokenID = principal.tokenID else {
            throw Problem.forbidden("Only a device's access token can register a signing key.")
        }
        switch try await services.storage.registerDeviceKey(tokenID: tokenID, publicKey: key.base64, now: Date()) {
        case .stored:
            context.logger.info("Device signing key registered", metadata: ["device": .stringConvertible(principal.deviceID ?? 0)])
            await services.audit(.deviceKeyRegistered, request: request, context: context, projectID: membership.projectID,
                subject: principal.userName, detail: ["device": principal.deviceID.map(String.init) ?? "", "key": key.base64, "via": "device-key"])
            return Response(status: .noContent)
        case .same:
            return Response(status: .noContent)
        case .notOneDevice:
            // A token several homes may share (`user add`'s) keeps no key: its pushes stay unsigned in history.
            context.logger.info("Device signing key not kept: the token was not enrolled with a login code")
            return Response(status: .noContent)
        case .different:
            await services.audit(.deviceKeyRefused, request: request, context: context, projectID: membership.projectID,
                subject: principal.userName, detail: [
                    "device": principal.deviceID.map(String.init) ?? "", "key": key.base64,
                    "reason": "the token holds another signing key, which stays",
                ])
            throw Problem(.conflict, "device-key-mismatch", title: "Another signing key is registered",
                detail: "This device's token already holds another signing key, which stays: a token's key is never replaced. Log in again with a new code from your project's admin.",
                field: "publicKey")
        }
    }
}

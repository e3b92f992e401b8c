import Foundation
import HTTPTypes
import Hummingbird
import ServerStorage
import SyncCore

/// What a device says about itself on its pulls and pushes: `FieldSheet-Waiting` (how many changes wait in its
/// outbox), `FieldSheet-Device` (its device database's id, the `clientId` of its pushes) and `User-Agent` (the
/// client and its version). A request without `FieldSheet-Waiting` reports nothing (a script, the console).
enum DeviceHeaders {
    static let waiting = HTTPField.Name("FieldSheet-Waiting")!
    static let device = HTTPField.Name("FieldSheet-Device")!

    static func report(_ headers: HTTPFields, at: Date = Date()) -> DeviceReport? {
        guard let text = headers[waiting], let count = Int(text.trimmingCharacters(in: .whitespaces)), count >= 0 else { return nil }
        let clean = { (value: String?) -> String? in
            guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty, value.utf8.count <= 128,
                  !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
            return value
        }
        return DeviceReport(clientID: clean(headers[device]), clientVersion: clean(headers[.userAgent]), waiting: count, at: at)
    }
}

/// `POST /v1/login`: a one-time login code (``LoginCode``) becomes a device token. Needs no token; every failed
/// exchange counts against the caller's address as a wrong token does (``AuthThrottle``), so codes cannot be
/// guessed at speed.
struct LoginController {
    let services: ServerServices

    struct LoginRequest: Decodable, Sendable {
        var code: String
        /// What the device calls itself (its host name); shown to the project's admin.
        var deviceName: String?
        /// The device's Ed25519 public key (base64 of its 32 raw bytes), kept with the new token: its pushes must
        /// then be signed (docs/signed-submissions.md).
        var publicKey: String?
    }

    struct LoginResponse: Encodable, Sendable {
        var token: String
        var project: String
        var user: String
        var deviceID: Int64
    }

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.post("login", use: login)
    }

    @Sendable func login(_ request: Request, context: AppRequestContext) async throws -> Response {
        let address = services.trustedProxies.clientAddress(peer: context.remoteAddress, headers: request.headers)
        if let wait = services.throttle.retryAfter(for: address) {
            throw Problem.tooManyAttempts(retryAfter: Self.seconds(wait), reason: "The login code was not checked.")
        }
        var request = request
        let body = try await request.decodeJSON(LoginRequest.self, limits: services.limits)
        let name = (body.deviceName ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard name.count <= 64, !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw Problem.badRequest("deviceName is at most 64 characters on one line.", field: "deviceName")
        }
        var publicKey: String?
        if let sent = body.publicKey {
            guard let key = DeviceVerifyingKey(base64: sent) else {
                throw Problem.badRequest("publicKey is not an Ed25519 public key: send base64 of its 32 raw bytes (44 characters).", field: "publicKey")
            }
            publicKey = key.base64
        }
        guard let code = LoginCode.normalized(body.code) else {
            throw try await failure(address, request, context, "That is not a login code: a code is \(LoginCode.length) letters and digits, like K7QM3-XW9TP. Check what you typed.")
        }
        let token = AccessToken.generate()
        let outcome = try await services.storage.redeemLoginCode(
            codeHash: LoginCode.hash(normalized: code), tokenHash: AccessToken.hash(token), deviceName: name.isEmpty ? "device" : name,
            clientVersion: request.headers[.userAgent].map { String($0.prefix(128)) }, publicKey: publicKey, now: Date())
        switch outcome {
        case .enrolled(let deviceID, _, let userName, let projectID, let projectName):
            context.logger.info("Device enrolled with a login code", metadata: ["user": .string(userName), "project": .string(projectName)])
            await services.audit(.loginCodeUsed, request: request, context: context,
                projectID: projectID, subject: userName, detail: ["device": String(deviceID), "name": name.isEmpty ? "device" : name], actor: userName)
            if let publicKey {
                // The key went in with the code's exchange (the new token is the device's own): recorded as the
                // key registrations of `POST …/device-key` are.
                await services.audit(.deviceKeyRegistered, request: request, context: context, projectID: projectID, subject: userName,
                    detail: ["device": String(deviceID), "key": publicKey, "via": "login-code"], actor: userName)
            }
            return try Response.json(LoginResponse(token: token, project: projectName, user: userName, deviceID: deviceID))
        case .unknown:
            throw try await failure(address, request, context, "That login code is not known. Check what you typed, or ask your project's admin for a new code.")
        case .used:
            throw try await failure(address, request, context, "That login code was used already: a code enrols one device. Ask your project's admin for a new code.")
        case .expired:
            throw try await failure(address, request, context, "That login code has expired. Ask your project's admin for a new code.")
        case .notAMember:
            throw try await failure(address, request, context, "The person this login code was made for is no longer a member of its project. Ask your project's admin.")
        }
    }

    /// Counts a failed exchange: 401 `login-code-invalid`, or 429 once the address has failed too often.
    private func failure(_ address: String, _ request: Request, _ context: AppRequestContext, _ detail: String) async throws -> Problem {
        context.logger.info("Login code refused", metadata: ["remote": .string(address)])
        await services.audit(.loginCodeRefused, request: request, context: context, detail: ["reason": detail], actor: "(unknown code)")
        if let wait = services.throttle.recordFailure(from: address) {
            return Problem.tooManyAttempts(retryAfter: Self.seconds(wait), reason: detail)
        }
        return Problem(.unauthorized, "login-code-invalid", title: "Login code not accepted", detail: detail, field: "code")
    }

    static func seconds(_ wait: Duration) -> Int {
        max(1, Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
    }
}

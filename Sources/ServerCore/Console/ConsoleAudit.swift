import Foundation
import Hummingbird
import ServerStorage

/// The administrative acts of people and devices, as the audit log names them.
enum PeopleAuditAction: String, Sendable, CaseIterable {
    case projectCreated = "project.created"
    case memberInvited = "member.invited"
    case roleChanged = "member.role-changed"
    case propertySet = "member.property-set"
    case propertyRemoved = "member.property-removed"
    case memberRemoved = "member.removed"
    case loginCodeCreated = "login-code.created"
    case loginCodeUsed = "login-code.used"
    case loginCodeRefused = "login-code.refused"
    case deviceRevoked = "device.revoked"
    case signIn = "sign-in"
    case signInFailed = "sign-in.failed"
}

/// Records a console act in the audit log: who (the signed-in person), when, from where (the client's address,
/// as a trusted proxy reports it), what, and in which project.
enum ConsoleAudit {
    static func record(
        _ services: ServerServices, _ context: AppRequestContext, _ request: Request, action: PeopleAuditAction, actor: String? = nil,
        project: Int64?, subject: String, detail: [String: String]
    ) async throws {
        let address = services.trustedProxies.clientAddress(peer: context.remoteAddress, headers: request.headers)
        context.logger.info(
            "Audit", metadata: [
                "action": .string(action.rawValue), "actor": .string(actor ?? context.principal?.userName ?? "—"), "subject": .string(subject),
                "remote": .string(address), "project": .string(project.map(String.init) ?? "—"),
            ])
    }
}

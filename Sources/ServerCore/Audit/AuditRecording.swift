import Hummingbird
import Logging
import ServerStorage

extension ServerServices {
    /// Records an administrative act made by the request's principal (or, for an act with no principal yet such
    /// as a failed sign-in, by `actor`), from the client's address as the trusted proxies report it.
    ///
    /// The act has already happened when this is called; a log that cannot be written is reported in the
    /// server's log and does not undo or fail the act.
    func audit(
        _ action: AuditAction, request: Request, context: AppRequestContext, projectID: Int64? = nil, subject: String = "",
        detail: [String: String] = [:], actor: String? = nil
    ) async {
        let event = AuditEvent(
            actor: actor ?? context.principal?.userName ?? "", actorID: actor == nil ? context.principal?.userID : nil,
            address: trustedProxies.clientAddress(peer: context.remoteAddress, headers: request.headers), projectID: projectID,
            action: action, subject: subject, detail: detail)
        do {
            try await storage.recordAudit(event)
        } catch {
            context.logger.error("The audit log could not record an act", metadata: ["action": .string(action.rawValue), "error": .string("\(error)")])
        }
    }
}

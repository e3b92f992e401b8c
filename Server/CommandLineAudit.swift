import ServerStorage

extension ServerStorage {
    /// Records an act of one of `fieldsheet-server`'s own commands in the audit log: the actor is
    /// ``AuditEvent/commandLine`` and there is no address. The act has happened already; a log that cannot be
    /// written is said on stderr and does not fail the command.
    func auditCommandLine(_ action: AuditAction, projectID: Int64? = nil, subject: String = "", detail: [String: String] = [:]) async {
        do {
            try await recordAudit(AuditEvent(actor: AuditEvent.commandLine, projectID: projectID, action: action, subject: subject, detail: detail))
        } catch {
            warn("fieldsheet-server: warning: the audit log could not record \(action.rawValue): \(error)")
        }
    }
}

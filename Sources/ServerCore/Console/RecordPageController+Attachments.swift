import Hummingbird
import ServerStorage

extension RecordPageController {
    /// `GET /console/projects/{project}/attachments/{sha256}`: the record page's attachment link, answered by the
    /// same check as the API's download (a record the viewer may read references it; otherwise 404).
    @Sendable func attachment(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard let sha256 = context.parameters.get("sha256"), AttachmentKey.isValidDigest(sha256) else { throw Problem.notFound("attachment") }
        return try await AttachmentDownload(storage: services.storage).response(
            AttachmentKey(projectID: membership.projectID, sha256: sha256), userID: principal.userID, role: membership.role, range: request.headers[.range])
    }
}

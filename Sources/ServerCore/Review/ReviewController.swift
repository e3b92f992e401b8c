import Foundation
import FormModel
import Hummingbird
import ServerStorage
import SyncCore

/// The office side of the API: `POST …/records/{recordId}/review`, `GET …/records/{recordId}/history`,
/// `GET …/conflicts` and `POST …/conflicts/{conflictId}/resolve`.
///
/// Reviews and resolutions are committed through the storage's push transaction (``ReviewActions``): they take
/// a sequence number, so the change feed carries them to devices like any other change.
struct ReviewController {
    let services: ServerServices

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.post("records/:recordId/review", use: review)
        group.get("records/:recordId/history", use: history)
        group.get("conflicts", use: conflicts)
        group.post("conflicts/:conflictId/resolve", use: resolve)
    }

    @Sendable func review(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard let id = context.parameters.get("recordId").flatMap(UUID.init(text:)) else { throw Problem.notFound("record") }
        var request = request
        let body = try JSONDecoder().decode(ReviewRequest.self, from: try await request.jsonBody(limits: services.limits))
        let state = try ReviewActions.settableState(body.state)
        let comment = try ReviewActions.comment(body.comment)
        let record = try await ReviewActions(services: services).review(membership, principal, recordID: id, state: state, comment: comment, logger: context.logger)
        return .jsonBytes(record.envelope.jsonBytes())
    }

    @Sendable func history(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard let id = context.parameters.get("recordId").flatMap(UUID.init(text:)),
              let record = try await services.storage.record(projectID: membership.projectID, id: id),
              RecordAccess.canRead(record, userID: principal.userID, role: membership.role)
        else { throw Problem.notFound("record") }
        let entries = try await services.storage.history(projectID: membership.projectID, recordID: id)
        return try .json(HistoryResponse(recordID: id, entries: entries))
    }

    @Sendable func conflicts(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        try ReviewActions.requireReviewer(membership)
        let which = request.uri.queryParameters.get("state") ?? "open"
        guard which == "open" || which == "all" else {
            throw Problem.badRequest("state must be \"open\" (the default) or \"all\", not \"\(which)\".", field: "state")
        }
        let after = try SyncController.integer(request, "after", default: 0, range: 0...Int64.max)
        let limit = Int(try SyncController.integer(request, "limit", default: 100, range: 1...500))
        let entries = try await services.storage.conflictLog(
            projectID: membership.projectID, viewer: principal.userID, openOnly: which == "open", after: after, limit: limit)
        return try .json(ConflictList(conflicts: entries.map(ConflictView.init), next: entries.count == limit ? entries.last?.id : nil))
    }

    @Sendable func resolve(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard let id = context.parameters.get("conflictId").flatMap(Int64.init) else { throw Problem.notFound("conflict") }
        var request = request
        // An unknown conflict is a 404 before the body is looked at, as before.
        guard try await services.storage.conflict(projectID: membership.projectID, viewer: principal.userID, id: id) != nil else {
            throw Problem.notFound("conflict")
        }
        try ReviewActions.requireReviewer(membership)
        let body = try JSONDecoder().decode(ResolveRequest.self, from: try await request.jsonBody(limits: services.limits))
        guard let keep = ConflictEntry.Winner(rawValue: body.keep) else {
            throw Problem.validation("keep must be \"server\" (the value the record holds) or \"client\" (the device's value), not \"\(body.keep)\".", field: "keep")
        }
        let resolved = try await ReviewActions(services: services).resolve(membership, principal, conflictID: id, keep: keep, logger: context.logger)
        return try .json(ConflictView(resolved))
    }
}

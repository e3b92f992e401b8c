import Foundation
import FormModel
import Hummingbird
import ServerStorage
import SyncCore

/// The office side of the API: `POST …/records/{recordId}/review`, `GET …/records/{recordId}/history`,
/// `GET …/conflicts` and `POST …/conflicts/{conflictId}/resolve`.
///
/// Reviews and resolutions are committed through the storage's push transaction: they take a sequence
/// number, so the change feed carries them to devices like any other change.
struct ReviewController {
    let services: ServerServices

    /// The longest review comment taken, in characters.
    static let maxCommentLength = 4_000

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.post("records/:recordId/review", use: review)
        group.get("records/:recordId/history", use: history)
        group.get("conflicts", use: conflicts)
        group.post("conflicts/:conflictId/resolve", use: resolve)
    }

    @Sendable func review(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard let id = context.parameters.get("recordId").flatMap(UUID.init(uuidString:)) else { throw Problem.notFound("record") }
        var request = request
        let body = try JSONDecoder().decode(ReviewRequest.self, from: try await request.jsonBody(limits: services.limits))
        guard let state = ReviewState(rawValue: body.state), ReviewState.settable.contains(state) else {
            throw Problem.validation(
                "A reviewer sets the state to \(ReviewState.settable.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), not \"\(body.state)\" (received and edited follow from what the collector does).",
                field: "state")
        }
        let comment = body.comment?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let comment, comment.count > Self.maxCommentLength {
            throw Problem.validation("The comment is \(comment.count) characters long; a review comment may have at most \(Self.maxCommentLength).", field: "comment")
        }
        if let comment, comment.unicodeScalars.contains("\u{0}") {
            throw Problem.validation("The comment holds a NUL character (U+0000); send text without it.", field: "comment")
        }
        let planner = ReviewPlanner(userId: principal.userId, role: membership.role, now: Date())
        let plan = try await services.storage.push(
            projectId: membership.projectId, clientId: "review", mutationIds: [], recordIds: [id]
        ) { snapshot in try planner.review(snapshot, recordId: id, state: state, comment: comment?.isEmpty == false ? comment : nil) }
        services.storage.changes.announce(plan, projectId: membership.projectId)
        guard let record = plan.records.first else { throw Problem.notFound("record") }
        context.logger.info("Record reviewed", metadata: ["record": .string(id.lowercased), "state": .string(state.rawValue)])
        return try .json(record.snapshot)
    }

    @Sendable func history(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard let id = context.parameters.get("recordId").flatMap(UUID.init(uuidString:)),
              let record = try await services.storage.record(projectId: membership.projectId, id: id),
              RecordAccess.canRead(record, userId: principal.userId, role: membership.role)
        else { throw Problem.notFound("record") }
        let entries = try await services.storage.history(projectId: membership.projectId, recordId: id)
        return try .json(HistoryResponse(recordId: id, entries: entries))
    }

    @Sendable func conflicts(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        try requireReviewer(membership)
        let which = request.uri.queryParameters.get("state") ?? "open"
        guard which == "open" || which == "all" else {
            throw Problem.badRequest("state must be \"open\" (the default) or \"all\", not \"\(which)\".", field: "state")
        }
        let after = try SyncController.integer(request, "after", default: 0, range: 0...Int64.max)
        let limit = Int(try SyncController.integer(request, "limit", default: 100, range: 1...500))
        let entries = try await services.storage.conflictLog(
            projectId: membership.projectId, viewer: principal.userId, openOnly: which == "open", after: after, limit: limit)
        return try .json(ConflictList(conflicts: entries.map(ConflictView.init), next: entries.count == limit ? entries.last?.id : nil))
    }

    @Sendable func resolve(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard let id = context.parameters.get("conflictId").flatMap(Int64.init),
              let conflict = try await services.storage.conflict(projectId: membership.projectId, viewer: principal.userId, id: id)
        else { throw Problem.notFound("conflict") }
        try requireReviewer(membership)
        var request = request
        let body = try JSONDecoder().decode(ResolveRequest.self, from: try await request.jsonBody(limits: services.limits))
        guard let keep = ConflictEntry.Winner(rawValue: body.keep) else {
            throw Problem.validation("keep must be \"server\" (the value the record holds) or \"client\" (the device's value), not \"\(body.keep)\".", field: "keep")
        }
        guard conflict.open else { throw Self.alreadyResolved(id) }
        let planner = ReviewPlanner(userId: principal.userId, role: membership.role, now: Date())
        let clock = services.clock.now()
        let plan: PushPlan
        do {
            plan = try await services.storage.push(
                projectId: membership.projectId, clientId: "review", mutationIds: [], recordIds: [conflict.recordId]
            ) { snapshot in try planner.resolve(snapshot, conflict: conflict, keep: keep, clock: clock) }
        } catch let error as StorageError where error.code == .alreadyResolved {
            throw Self.alreadyResolved(id)
        }
        services.storage.changes.announce(plan, projectId: membership.projectId)
        context.logger.info("Conflict resolved", metadata: ["conflict": .stringConvertible(id), "kept": .string(keep.rawValue)])
        guard let resolved = try await services.storage.conflict(projectId: membership.projectId, viewer: principal.userId, id: id) else {
            throw Problem.notFound("conflict")
        }
        return try .json(ConflictView(resolved))
    }

    func requireReviewer(_ membership: Principal.Membership) throws {
        guard membership.role.seesSharedRecords else {
            throw Problem.forbidden("Only reviewers and admins see the project's conflict log; your role in this project is collector.")
        }
    }

    static func alreadyResolved(_ id: Int64) -> Problem {
        Problem(.conflict, "already-resolved", title: "Conflict already resolved",
                detail: "Conflict \(id) is no longer open: it was resolved already. Reload the conflict log to see how.", field: "conflictId")
    }
}

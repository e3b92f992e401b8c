import Foundation
import Hummingbird
import Logging
import ServerStorage
import SyncCore

/// Reviewing a record and resolving a conflict, for the API (``ReviewController``) and the console alike:
/// committed through the storage's push transaction, so the change feed carries them to devices.
struct ReviewActions {
    let services: ServerServices

    /// The longest review comment taken, in characters.
    static let maxCommentLength = 4_000

    /// The comment trimmed (nil when empty), or why it is refused.
    static func comment(_ raw: String?) throws -> String? {
        guard let comment = raw?.trimmingCharacters(in: .whitespacesAndNewlines), !comment.isEmpty else { return nil }
        if comment.count > maxCommentLength {
            throw Problem.validation("The comment is \(comment.count) characters long; a review comment may have at most \(maxCommentLength).", field: "comment")
        }
        if comment.unicodeScalars.contains("\u{0}") {
            throw Problem.validation("The comment holds a NUL character (U+0000); send text without it.", field: "comment")
        }
        return comment
    }

    /// The state a reviewer asked for, or why it is refused.
    static func settableState(_ raw: String) throws -> ReviewState {
        guard let state = ReviewState(rawValue: raw), ReviewState.settable.contains(state) else {
            throw Problem.validation(
                "A reviewer sets the state to \(ReviewState.settable.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), not \"\(raw)\" (received and edited follow from what the collector does).",
                field: "state")
        }
        return state
    }

    /// Sets the record's review state and comment; returns the record as it now is.
    func review(_ membership: Principal.Membership, _ principal: Principal, recordID: UUID, state: ReviewState, comment: String?, logger: Logger) async throws -> StoredRecord {
        let planner = ReviewPlanner(userID: principal.userID, role: membership.role, now: Date())
        let plan = try await services.storage.push(
            projectID: membership.projectID, clientID: "review", mutationIDs: [], recordIDs: [recordID]
        ) { snapshot in try planner.review(snapshot, recordID: recordID, state: state, comment: comment) }
        services.storage.changes.announce(plan, projectID: membership.projectID)
        guard let record = plan.records.first else { throw Problem.notFound("record") }
        logger.info("Record reviewed", metadata: ["record": .string(recordID.lowercased), "state": .string(state.rawValue)])
        return record
    }

    /// Resolves an open conflict the caller may see, keeping one side; returns the entry as it now is.
    func resolve(_ membership: Principal.Membership, _ principal: Principal, conflictID id: Int64, keep: ConflictEntry.Winner, logger: Logger) async throws -> ConflictLogEntry {
        guard let conflict = try await services.storage.conflict(projectID: membership.projectID, viewer: principal.userID, id: id) else {
            throw Problem.notFound("conflict")
        }
        try Self.requireReviewer(membership)
        guard conflict.open else { throw Self.alreadyResolved(id) }
        let planner = ReviewPlanner(userID: principal.userID, role: membership.role, now: Date())
        let clock = services.clock.now()
        let plan: PushPlan
        do {
            plan = try await services.storage.push(
                projectID: membership.projectID, clientID: "review", mutationIDs: [], recordIDs: [conflict.recordID]
            ) { snapshot in try planner.resolve(snapshot, conflict: conflict, keep: keep, clock: clock) }
        } catch let error as StorageError where error.code == .alreadyResolved {
            throw Self.alreadyResolved(id)
        }
        services.storage.changes.announce(plan, projectID: membership.projectID)
        logger.info("Conflict resolved", metadata: ["conflict": .stringConvertible(id), "kept": .string(keep.rawValue)])
        guard let resolved = try await services.storage.conflict(projectID: membership.projectID, viewer: principal.userID, id: id) else {
            throw Problem.notFound("conflict")
        }
        return resolved
    }

    static func requireReviewer(_ membership: Principal.Membership) throws {
        guard membership.role.seesSharedRecords else {
            throw Problem.forbidden("Only reviewers and admins see the project's conflict log; your role in this project is collector.")
        }
    }

    static func alreadyResolved(_ id: Int64) -> Problem {
        Problem(.conflict, "already-resolved", title: "Conflict already resolved",
                detail: "Conflict \(id) is no longer open: it was resolved already. Reload the conflict log to see how.", field: "conflictId")
    }
}

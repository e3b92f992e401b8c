import Crypto
import Foundation
import Logging
import ServerStorage
import SyncCore

/// One review decision applied to many records at once (the console's submissions table): each record is
/// reviewed by ``ReviewPlanner`` exactly as a single review is, so its history and the change feed carry it the
/// same way. The records are taken in chunks of ``chunkSize``, one push transaction each.
///
/// Safe to retry: every record's review is stored as a mutation outcome under the bulk request's id (a random
/// token the page hands out with its form) and the record's id; a request sent again with the same id finds
/// those outcomes and reviews no record a second time, so no second history entry is written.
struct BulkReview {
    let services: ServerServices

    /// The most records one request reviews.
    static let maxRecords = 500
    /// The records reviewed in one transaction.
    static let chunkSize = 100
    /// The client id bulk reviews are stored under in the mutation outcomes.
    static let clientID = "console-bulk-review"

    /// What a bulk review did.
    struct Summary: Sendable, Hashable {
        /// Records whose review this request set now.
        var reviewed = 0
        /// Records this same request (by its id) had reviewed already: a retry.
        var repeated = 0
        /// Records left as they were: not submitted, or not visible to the reviewer.
        var skipped = 0
    }

    /// A bulk request's id as a form carries it: 16 to 64 characters of base64url.
    static func requestID(_ raw: String?) throws -> String {
        guard let raw, (16...64).contains(raw.count),
              raw.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "-" || $0 == "_" })
        else {
            throw Problem.badRequest("The bulk review form is missing its request id (or it is damaged). Reload the table and send it again.", field: "batch")
        }
        return raw
    }

    /// Reviews `recordIds` (at most ``maxRecords``) with `state` and `comment`, under the request id `batch`.
    /// Reviews the records `recordIds` of the form `formId` (a record of another form is skipped, so the
    /// audit entry names every record the review touched).
    func review(
        _ membership: Principal.Membership, _ principal: Principal, formID: String, recordIDs: [UUID], state: ReviewState, comment: String?,
        batch: String, logger: Logger
    ) async throws -> Summary {
        guard membership.role.seesSharedRecords else {
            throw Problem.forbidden("Only reviewers and admins review records; your role in this project is collector.")
        }
        var unique: [UUID] = []
        var seen = Set<UUID>()
        for id in recordIDs where seen.insert(id).inserted { unique.append(id) }
        guard unique.count <= Self.maxRecords else {
            throw Problem.validation(
                "\(unique.count) records were chosen; one bulk review takes at most \(Self.maxRecords). Narrow the filter, or review them in parts.",
                field: "records")
        }
        let digest = Data(SHA256.hash(data: Data("\(state.rawValue)\u{0}\(comment ?? "")".utf8)))
        var summary = Summary()
        var start = 0
        while start < unique.count {
            let chunk = Array(unique[start..<min(start + Self.chunkSize, unique.count)])
            start += chunk.count
            let mutationIDs = chunk.map { Self.mutationID(batch: batch, recordID: $0) }
            let planner = ReviewPlanner(userID: principal.userID, role: membership.role, now: Date())
            let userID = principal.userID
            let plan = try await services.storage.push(
                projectID: membership.projectID, clientID: Self.clientID, mutationIDs: mutationIDs, recordIDs: chunk
            ) { snapshot in
                var plan = PushPlan()
                for (recordID, mutationID) in zip(chunk, mutationIDs) {
                    if let stored = snapshot.storedOutcomes[mutationID] {
                        plan.outcomes.append(stored.outcome)
                        continue
                    }
                    let outcome: MutationOutcome
                    do {
                        if let record = snapshot.records[recordID], record.form.id != formID {
                            throw Problem.notFound("record")
                        }
                        let one = try planner.review(snapshot, recordID: recordID, state: state, comment: comment)
                        plan.records += one.records
                        plan.history += one.history
                        plan.appliedCount += 1
                        outcome = MutationOutcome(
                            mutationID: mutationID, recordID: recordID, status: .applied, revision: one.records.first?.revision, changed: true)
                    } catch let problem as Problem {
                        outcome = MutationOutcome(
                            mutationID: mutationID, recordID: recordID, status: .rejected,
                            problem: problem.details)
                    }
                    plan.outcomes.append(outcome)
                    plan.newOutcomes.append(StoredOutcome(mutationID: mutationID, userID: userID, digest: digest, outcome: outcome))
                }
                return plan
            }
            services.storage.changes.announce(plan, projectID: membership.projectID)
            let fresh = Set(plan.newOutcomes.map(\.mutationID))
            for outcome in plan.outcomes {
                if !fresh.contains(outcome.mutationID) {
                    summary.repeated += 1
                } else if outcome.status == .rejected {
                    summary.skipped += 1
                } else {
                    summary.reviewed += 1
                }
            }
        }
        logger.info("Records reviewed in bulk", metadata: [
            "state": .string(state.rawValue), "reviewed": .stringConvertible(summary.reviewed),
            "repeated": .stringConvertible(summary.repeated), "skipped": .stringConvertible(summary.skipped),
        ])
        return summary
    }

    /// The mutation id of one record's review in a bulk request.
    static func mutationID(batch: String, recordID: UUID) -> String { "bulk-\(batch)-\(recordID.lowercased)" }
}

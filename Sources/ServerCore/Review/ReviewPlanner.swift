import Foundation
import FormModel
import ServerStorage
import SyncCore

/// Decides a review or a conflict resolution inside the storage's transaction, from the record as it is
/// then: who may, what the record becomes, and the history entry. Pure: no I/O.
struct ReviewPlanner: Sendable {
    let userID: Int64
    let role: Role
    let now: Date

    /// Sets the review state of `recordId`, with an optional comment.
    ///
    /// A record the caller may not see is answered like a missing one (404); a collector may not review
    /// (403); only submitted records are reviewed (409).
    func review(_ snapshot: PushSnapshot, recordID: UUID, state: ReviewState, comment: String?) throws -> PushPlan {
        var record = try reviewable(snapshot, recordID: recordID)
        let previous = record.review?.state
        record.review = RecordReview(state: state, comment: comment)
        record.revision += 1
        record.times.updated = now
        record.receivedAt = now
        let entry = HistoryEntry(
            recordID: recordID, revision: record.revision, kind: .review, userID: userID, clientID: nil, at: now,
            detail: HistoryDetail(review: .init(from: previous, to: state, comment: comment)))
        return PushPlan(records: [record], history: [entry])
    }

    /// Resolves the open conflict `conflict` keeping the server's value (the record stays as it is) or the
    /// device's (written as a new revision of the field, stamped `clock`).
    func resolve(_ snapshot: PushSnapshot, conflict: ConflictLogEntry, keep: ConflictEntry.Winner, clock: HybridTimestamp) throws -> PushPlan {
        var record = try reviewable(snapshot, recordID: conflict.recordID, submittedOnly: false)
        var plan = PushPlan(resolvedConflicts: [conflict.id])
        var detail = HistoryDetail(resolution: .init(conflictID: conflict.id, fieldID: conflict.entry.fieldID, kept: keep))
        if keep == .client, let fieldID = conflict.entry.fieldID, let client = conflict.entry.client {
            let before = record.fields[fieldID]?.value
            if before != client.value {
                record.revision += 1
                record.fields[fieldID] = FieldState(value: client.value, revision: record.revision, hlc: clock, clientID: client.clientID)
                record.times.updated = now
                record.receivedAt = now
                detail.fields[fieldID] = .init(from: before, to: client.value)
                plan.records = [record]
            }
        }
        plan.history = [HistoryEntry(recordID: record.id, revision: record.revision, kind: .resolution, userID: userID, clientID: nil, at: now, detail: detail)]
        return plan
    }

    private func reviewable(_ snapshot: PushSnapshot, recordID: UUID, submittedOnly: Bool = true) throws -> StoredRecord {
        guard let record = snapshot.records[recordID], RecordAccess.canRead(record, userID: userID, role: role) else {
            throw Problem.notFound("record")
        }
        guard role.seesSharedRecords else {
            throw Problem.forbidden("Only reviewers and admins review records and resolve conflicts; your role in this project is collector.")
        }
        if submittedOnly, record.state != .submitted {
            throw Problem(
                .conflict, "not-submitted", title: "Record not submitted",
                detail: "Record \(recordID.lowercased) is \(record.state == .draft ? "a draft" : "deleted"); only submitted records are reviewed. Wait until its author submits it.",
                field: "recordId")
        }
        return record
    }
}

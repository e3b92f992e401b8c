import FormModel
import ServerStorage
import SyncCore

/// Who may see and change which record.
///
/// - Everyone sees and changes the records they created (drafts included).
/// - Reviewers and admins also see every record that was ever submitted (tombstones too) and may edit
///   submitted records, keeping them submitted.
/// - Anything else is invisible: answered exactly like a record that does not exist.
package enum RecordAccess {
    package static func canRead(_ record: StoredRecord, userId: Int64, role: Role) -> Bool {
        canRead(authorId: record.authorId, shared: record.shared, userId: userId, role: role)
    }

    /// Whether a member may read a record by `authorId`, shared or not.
    package static func canRead(authorId: Int64, shared: Bool, userId: Int64, role: Role) -> Bool {
        authorId == userId || (role.seesSharedRecords && shared)
    }

    /// Why `userId` may not apply a mutation to `record`, or nil when they may.
    package static func writeProblem(_ record: StoredRecord, userId: Int64, role: Role, newState: RecordState) -> Problem? {
        if record.authorId == userId { return nil }
        guard canRead(record, userId: userId, role: role) else { return .notFound("record") }
        guard record.state == .submitted, newState == .submitted else {
            return .forbidden("Reviewers may edit submitted records of others but not reopen, delete or restore them; only the author can.", field: "state")
        }
        return nil
    }

    /// The change-feed visibility of a member.
    package static func visibility(userId: Int64, role: Role) -> RecordVisibility {
        role.seesSharedRecords ? .authoredByOrShared(userId) : .authoredBy(userId)
    }
}

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
    package static func canRead(_ record: StoredRecord, userID: Int64, role: Role) -> Bool {
        canRead(authorID: record.authorID, shared: record.shared, userID: userID, role: role)
    }

    /// Whether a member may read a record by `authorId`, shared or not.
    package static func canRead(authorID: Int64, shared: Bool, userID: Int64, role: Role) -> Bool {
        authorID == userID || (role.seesSharedRecords && shared)
    }

    /// Why `userId` may not apply a mutation to `record`, or nil when they may.
    package static func writeProblem(_ record: StoredRecord, userID: Int64, role: Role, newState: RecordState) -> Problem? {
        if record.authorID == userID { return nil }
        guard canRead(record, userID: userID, role: role) else { return .notFound("record") }
        guard record.state == .submitted, newState == .submitted else {
            return .forbidden("Reviewers may edit submitted records of others but not reopen, delete or restore them; only the author can.", field: "state")
        }
        return nil
    }

    /// The change-feed visibility of a member.
    package static func visibility(userID: Int64, role: Role) -> RecordVisibility {
        role.seesSharedRecords ? .authoredByOrShared(userID) : .authoredBy(userID)
    }
}

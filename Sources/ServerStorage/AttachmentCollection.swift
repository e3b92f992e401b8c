import Foundation
import FormModel
import SyncCore

/// Garbage collection of attachments: which stored attachments the server may remove, and when.
///
/// **What keeps an attachment.** An attachment stays while anything the server can still serve or hand
/// back refers to it:
/// - a record's current value, in any state (drafts, submitted records and tombstones, which an edit can
///   restore): the `attachment_refs` index, rewritten with each pushed record;
/// - either side of any conflict-log entry, open or resolved: the log never loses a value, and resolving
///   an entry for the device's side puts its value back into the record. Kept in `conflict_attachment_refs`,
///   written with the entry in the push's transaction and never removed (entries are never removed).
///
/// A record's history keeps the reference itself (hash, name, type, size) as its audit trail and goes on
/// showing it, but the server serves an attachment's bytes only through a record that references it now
/// (a superseded photo already answers 404), so history alone keeps no bytes: a record edited to drop its
/// photo makes the photo collectable once nothing else refers to it.
///
/// **When.** A complete attachment referenced by nothing is removed only once it was stored at least
/// ``AttachmentCollectionPolicy/unreferencedAge`` ago *and* a sweep first found it unreferenced at least that
/// long ago (`attachment_unreferenced` notes when): devices upload after they push the referencing record,
/// but a push in flight (or one retried after an outage) may be about to reference it. An upload never
/// completed is removed once nothing was appended to it for ``AttachmentCollectionPolicy/abandonedUploadAge``.
///
/// **Safely.** The last check and the removal happen together under the lock pushes take to write
/// references (SQLite's single writer; on PostgreSQL a project-wide advisory lock pushes take shared when
/// they write an attachment reference, and the upload's row lock), so a push either committed its reference
/// before (and the attachment stays) or commits after (and finds it missing, so the device uploads it again).
/// A download in progress keeps its bytes: an open file stays readable after unlinking; PostgreSQL
/// downloads hold a lease the sweep respects. An upload in progress holds its partial file's lock (files)
/// or row (PostgreSQL), and the sweep skips it.
public struct AttachmentCollectionPolicy: Sendable, Hashable {
    /// How long a complete attachment stays after it was stored and after it was first found unreferenced.
    public var unreferencedAge: TimeInterval
    /// How long an incomplete upload stays after its last appended byte.
    public var abandonedUploadAge: TimeInterval

    public static let defaultUnreferencedAge: TimeInterval = 24 * 3600
    public static let defaultAbandonedUploadAge: TimeInterval = 7 * 24 * 3600

    public init(unreferencedAge: TimeInterval = Self.defaultUnreferencedAge, abandonedUploadAge: TimeInterval = Self.defaultAbandonedUploadAge) {
        self.unreferencedAge = unreferencedAge
        self.abandonedUploadAge = abandonedUploadAge
    }

    /// Whether an unreferenced complete attachment stored at `storedAt`, first found unreferenced at
    /// `unreferencedSince`, may go at `now`.
    public func collects(storedAt: Date, unreferencedSince: Date, now: Date) -> Bool {
        storedAt <= now.addingTimeInterval(-unreferencedAge) && unreferencedSince <= now.addingTimeInterval(-unreferencedAge)
    }

    /// Whether an incomplete upload last appended to at `lastAppend` may go at `now`.
    public func collectsUpload(lastAppend: Date, now: Date) -> Bool {
        lastAppend <= now.addingTimeInterval(-abandonedUploadAge)
    }
}

/// One attachment a sweep removed (or, in a dry run, would remove).
public struct CollectedAttachment: Sendable, Hashable {
    public enum Reason: String, Sendable {
        /// Complete, and referenced by nothing for the grace period.
        case unreferenced
        /// Never completed, and nothing appended for the grace period.
        case abandonedUpload
    }

    public var key: AttachmentKey
    public var reason: Reason
    /// Bytes freed.
    public var bytes: Int64

    public init(key: AttachmentKey, reason: Reason, bytes: Int64) {
        self.key = key
        self.reason = reason
        self.bytes = bytes
    }
}

/// What one sweep did.
public struct AttachmentSweep: Sendable, Hashable {
    /// Removed (or, in a dry run, removable) attachments, by project then hash.
    public var collected: [CollectedAttachment] = []
    /// Unreferenced complete attachments kept because they are still within their grace period.
    public var waiting: Int = 0
    public var waitingBytes: Int64 = 0
    /// Whether nothing was changed.
    public var dryRun: Bool

    public init(dryRun: Bool) {
        self.dryRun = dryRun
    }

    public func count(_ reason: CollectedAttachment.Reason) -> Int { collected.filter { $0.reason == reason }.count }
    public func bytes(_ reason: CollectedAttachment.Reason) -> Int64 { collected.filter { $0.reason == reason }.reduce(0) { $0 + $1.bytes } }
}

extension AttachmentSweep {
    public mutating func sort() {
        collected.sort { ($0.key.projectID, $0.key.sha256, $0.reason.rawValue) < ($1.key.projectID, $1.key.sha256, $1.reason.rawValue) }
    }
}

extension LoggedConflict {
    /// The hashes of the attachments either side of the entry holds: what the conflict log keeps.
    public var attachmentHashes: [String] {
        [entry.server?.value, entry.client?.value].compactMap { value in
            guard case .attachment(let reference)? = value else { return nil }
            return reference.sha256
        }
    }
}

extension PushPlan {
    /// Whether the plan writes any attachment reference (a record's value or a conflict-log entry): such a
    /// push must not interleave with a sweep's last check and removal.
    public var writesAttachmentReferences: Bool {
        records.contains { !$0.attachmentReferences.isEmpty } || conflicts.contains { !$0.attachmentHashes.isEmpty }
    }

    /// `(record, hash)` of every attachment the plan's conflict-log entries keep, without repeats.
    public var conflictAttachmentReferences: [(recordID: UUID, sha256: String)] {
        var seen = Set<String>()
        return conflicts.flatMap { conflict in conflict.attachmentHashes.map { (conflict.recordID, $0) } }
            .filter { seen.insert("\($0.0)/\($0.1)").inserted }
    }
}

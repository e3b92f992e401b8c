import Foundation
import FormModel
import GRDB
package import SyncCore

/// Where this device stands with the server.
public struct SyncStatus: Sendable, Hashable {
    /// This device's id, as the server knows it.
    public var deviceID: String
    /// Changes typed on this device and not yet acknowledged by the server (outbox rows).
    public var queuedChanges: Int
    /// Records those changes belong to.
    public var queuedRecords: Int
    /// Conflicts waiting for a person (manual policy).
    public var openConflicts: Int
    /// The change-feed position of the last applied pull page; 0 before the first pull.
    public var cursor: Int64
    /// When a sync last finished; nil when never.
    public var lastSync: Date?
    /// Attachments attached here that the server may still lack, and their bytes.
    public var waitingUploads: WaitingUploads = .none
    /// Attachments of opened records that are not on this device yet: the next sync downloads them.
    public var wantedDownloads = 0
    /// Records the server said still wait for attachments (from any device) at the last pull.
    public var recordsWaitingForAttachments = 0
}

extension DraftStore {
    /// The pull cursor stored with the last applied page (0 before the first pull).
    package func syncCursor() async throws -> Int64 {
        try await read(doing: "reading the sync cursor") { db in
            Int64(try String.fetchOne(db, sql: "SELECT cursor FROM sync_state WHERE id = 1") ?? "0") ?? 0
        }
    }

    /// Queued changes, open conflicts and the last sync.
    public func syncStatus() async throws -> SyncStatus {
        try await read(doing: "reading the sync status", Self.fetchSyncStatus)
    }

    static func fetchSyncStatus(_ db: Database) throws -> SyncStatus {
        let row = try Row.fetchOne(db, sql: "SELECT device_id, cursor, last_sync_at FROM sync_state WHERE id = 1")
        return SyncStatus(
            deviceID: row?["device_id"] ?? "unknown-device",
            queuedChanges: try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox") ?? 0,
            queuedRecords: try Int.fetchOne(db, sql: "SELECT count(DISTINCT record_id) FROM outbox") ?? 0,
            openConflicts: try Int.fetchOne(db, sql: "SELECT count(*) FROM conflicts WHERE resolved_at IS NULL") ?? 0,
            cursor: Int64(row?["cursor"] as String? ?? "0") ?? 0,
            lastSync: (row?["last_sync_at"] as Int64?).map(Self.date),
            waitingUploads: try fetchWaitingUploads(db),
            wantedDownloads: try Int.fetchOne(db, sql: "SELECT count(*) FROM blobs WHERE download = 'wanted' AND stored = 0") ?? 0,
            recordsWaitingForAttachments: try Int.fetchOne(db, sql: "SELECT count(*) FROM records WHERE missing_attachments IS NOT NULL AND state != 'deleted'") ?? 0)
    }

    /// Records the end of a successful sync and moves the clock past the server's.
    package func markSynced(serverClock: HybridTimestamp) async throws {
        try await write(doing: "recording the sync") { db in
            try db.execute(sql: "UPDATE sync_state SET last_sync_at = ? WHERE id = 1", arguments: [Self.nowMillis()])
            try Self.observe(db, serverClock)
        }
    }

    /// Applies one pull page, as the server sent it, and stores its cursor in the same transaction.
    ///
    /// The page is read once, record by record (no model of the page is built), and each record's fields
    /// are stored as the bytes the server sent: they become the record's synced fields. What the device
    /// still has to send is rebased on top as ``DeviceSync/rebase(pulledState:under:)`` says. Records
    /// already seen at this revision are skipped.
    ///
    /// Nothing is applied when the page names a form version this device does not hold (the answer lists
    /// them all: fetch them and apply the page again) or when the page cannot be read.
    package func applyPullPage(_ bytes: [UInt8]) async throws -> PullPageApplication {
        try await write(doing: "applying pulled changes") { db in
            var application = PullPageApplication.needsForms([])
            try db.inSavepoint {
                do {
                    application = try Self.applyPullPage(db, bytes)
                } catch let error as JSONReadError {
                    application = .unreadable(error)
                }
                if case .applied = application { return .commit }
                return .rollback
            }
            return application
        }
    }

    static func applyPullPage(_ db: Database, _ bytes: [UInt8]) throws -> PullPageApplication {
        let now = nowMillis()
        var applied = 0
        var forms: [FormKey: Bool] = [:]
        var missing = Set<FormKey>()
        let formStored = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM forms WHERE id = ? AND version = ?)")
        // Most pages arrive with nothing pending on the device: then no record needs asking.
        let anythingPending = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM outbox) OR EXISTS (SELECT 1 FROM sent_mutations)") ?? true
        let anyEdits = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM record_edits)") ?? true
        let pendingWork = try db.cachedStatement(sql: """
            SELECT EXISTS (SELECT 1 FROM outbox WHERE record_id = ?1 AND kind IN ('set', 'create')),
                   EXISTS (SELECT 1 FROM outbox WHERE record_id = ?1 AND kind IN ('submit', 'delete')),
                   EXISTS (SELECT 1 FROM sent_mutations WHERE record_id = ?1)
            """)
        // The rebase's decisions (?8, ?9) come from DeviceSync; the WHERE is DeviceSync.isNewer. The times are
        // the author's as the server sent them (?10–?12; this device's clock when the page does not say), and
        // a record with edits waiting here keeps the later of its own last change and the pulled one.
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO records (id, form_id, form_version, state, created_at, updated_at, submitted_at, server_revision, fields)
            VALUES (?1, ?2, ?3, ?4, coalesce(?10, ?5), coalesce(?11, ?5), ?12, ?6, fs_seal_fields(?7, 'record', ?1))
            ON CONFLICT (id) DO UPDATE SET
                form_version = CASE WHEN ?8 THEN records.form_version ELSE excluded.form_version END,
                state = CASE WHEN ?9 THEN records.state ELSE excluded.state END,
                server_revision = excluded.server_revision,
                fields = excluded.fields,
                created_at = coalesce(?10, records.created_at),
                updated_at = CASE WHEN ?13 THEN max(records.updated_at, excluded.updated_at) ELSE excluded.updated_at END,
                submitted_at = CASE WHEN ?9 THEN records.submitted_at ELSE coalesce(?12, records.submitted_at) END
            WHERE excluded.server_revision > records.server_revision
            """)
        let storeReview = try db.cachedStatement(sql: """
            INSERT INTO record_reviews (record_id, state, comment)
            SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM records WHERE id = ?1 AND server_revision <= ?4)
            ON CONFLICT (record_id) DO UPDATE SET state = excluded.state, comment = excluded.comment
            """)
        let dropReview = try db.cachedStatement(sql: """
            DELETE FROM record_reviews WHERE record_id = ?1 AND EXISTS (SELECT 1 FROM records WHERE id = ?1 AND server_revision <= ?2)
            """)
        let waiting = try db.cachedStatement(sql: """
            UPDATE records SET missing_attachments = ?1 WHERE id = ?2 AND server_revision <= ?3 AND missing_attachments IS NOT ?1
            """)
        let resend = try db.cachedStatement(sql: """
            UPDATE blobs SET upload = 'waiting', transferred = 0, failures = 0, retry_at = NULL, last_error = NULL
            WHERE sha256 = ? AND upload = 'done' AND stored = 1
            """)
        let anySealed = try holdsSealedPlaintexts(db)
        var anyReviews = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM record_reviews)") ?? true
        var reviewsWritten = false
        let end = try PullPageReader.read(bytes) { record in
            let form = record.form
            let stored: Bool
            if let known = forms[form] {
                stored = known
            } else {
                stored = try Bool.fetchOne(formStored, arguments: [form.id, form.version]) ?? false
                forms[form] = stored
            }
            if !stored { missing.insert(form) }
            // Once a form is missing nothing is applied; the rest of the page is read for its forms.
            guard missing.isEmpty else { return }
            let id = record.recordID.lowercased
            var pending = DeviceSync.PendingWork.none
            if anythingPending, let row = try Row.fetchOne(pendingWork, arguments: [id]) {
                pending = DeviceSync.PendingWork(edits: row[0], stateChange: row[1], inFlight: row[2])
            }
            let rebase = DeviceSync.rebase(pulledState: record.state, under: pending)
            try upsert.execute(arguments: [
                id, form.id, form.version, record.state.rawValue, now, record.revision, record.fieldsText,
                rebase.keepsLocalFormVersion, rebase.keepsLocalState,
                record.times.created.map(RecordTimes.millis), record.times.updated.map(RecordTimes.millis),
                record.times.submitted.map(RecordTimes.millis),
                pending != .none,
            ])
            if db.changesCount > 0 {
                applied += 1
                if !rebase.keepsLocalEdits, anyEdits { try Self.clearEdits(db, record: id) }
                if anySealed { try Self.restoreSealedPlaintexts(db, record: id) }
            }
            // What the server still waits for, as of this revision (a newer page says when it arrived).
            let hashes = record.missingAttachments.filter(AttachmentReference.isHash)
            try waiting.execute(arguments: [hashes.isEmpty ? nil : "[\"" + hashes.joined(separator: "\",\"") + "\"]", id, record.revision])
            // One this device sent in full is missing again (the server removed it while nothing referred to
            // it): sent again, from the start.
            for hash in hashes { try resend.execute(arguments: [hash]) }
            // The review travels with the record: kept as the server sent it at this revision, also when the
            // device already holds the revision (its own push made it, and the server's review moved with it).
            // A plain `received` (what every submission starts as) is not stored, so a pull of many new
            // records writes nothing more for it.
            if let review = record.review, review.state != .received || review.comment != nil {
                try storeReview.execute(arguments: [id, review.state.rawValue, review.comment, record.revision])
                anyReviews = true
                reviewsWritten = reviewsWritten || db.changesCount > 0
            } else if anyReviews {
                try dropReview.execute(arguments: [id, record.revision])
                reviewsWritten = reviewsWritten || db.changesCount > 0
            }
        }
        guard missing.isEmpty else { return .needsForms(missing) }
        try storeLostConflicts(db, end.lostConflicts)
        if reviewsWritten {
            // `record_reviews` is a WITHOUT ROWID table, whose changes SQLite does not report to GRDB: a review
            // that changed without its record (the office reviewed, nobody edited) must be announced, or an
            // observation of the record would not see it.
            try db.notifyChanges(in: Table("record_reviews"))
        }
        try db.execute(sql: "UPDATE sync_state SET cursor = ? WHERE id = 1", arguments: [String(end.cursor)])
        try observe(db, end.serverClock)
        return .applied(count: applied, end: end)
    }
}

extension DraftStore {
    /// Logs the conflict entries whose losing value this device wrote (another device's push replaced it):
    /// this device's side as `local`, the value that won as `remote`, each once by the server's log id. The
    /// entry is left open, so the record is marked and the person sees both values and decides (keep theirs,
    /// or put theirs back with ``resolveConflict(record:field:choice:)``); the office's open entries stay open
    /// the same way. Entries of records this device does not hold are skipped. A sealed value this device sealed
    /// itself is logged as its plaintext (``ownPlaintext(_:record:key:_:)``).
    static func storeLostConflicts(_ db: Database, _ lost: [LostConflict]) throws {
        guard !lost.isEmpty else { return }
        let known = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM conflicts WHERE server_id = ?)")
        let held = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM records WHERE id = ?)")
        let now = nowMillis()
        for conflict in lost {
            let record = conflict.recordID.lowercased
            guard try Bool.fetchOne(known, arguments: [conflict.id]) == false, try Bool.fetchOne(held, arguments: [record]) == true else { continue }
            let entry = conflict.entry
            // A sensitive answer this device sealed itself is shown as it typed it (another device's stays sealed).
            let field = entry.fieldID ?? ""
            try logConflict(
                db, record: record, field: field, policy: entry.policy.rawValue,
                local: try ownPlaintext(db, record: record, key: field, entry.server),
                remote: try ownPlaintext(db, record: record, key: field, entry.client),
                open: true, now: now, serverID: conflict.id)
            // The record's row is written so observations of it (the list's mark) see the new entry.
            try db.execute(sql: "UPDATE records SET updated_at = updated_at WHERE id = ?", arguments: [record])
        }
    }
}

/// What became of a pull page on the device.
package enum PullPageApplication: Sendable {
    /// The page and its cursor are stored; `count` records changed on this device (new, or at a newer revision).
    case applied(count: Int, end: PullPageEnd)
    /// Nothing was applied: the page names form versions this device does not hold.
    case needsForms(Set<FormKey>)
    /// Nothing was applied: the page is not a readable pull page (cut short or damaged).
    case unreadable(JSONReadError)
}

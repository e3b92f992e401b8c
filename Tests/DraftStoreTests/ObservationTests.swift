import FieldSheetTesting
import Foundation
import FormModel
import GRDB
import SyncCore
import Testing
@testable import DraftStore

/// Observations of the device database: the current value first, then one after every commit that changes
/// it — from a FormSession, from a pulled page (one value per page), from another process — and nothing
/// when a commit leaves it as it was; cancelling the task ends them.
struct ObservationTests {
    @Test func theListEmitsNowThenAfterAFormSessionCommit() async throws {
        let fixture = try await Fixture()
        let (task, seen) = collect(fixture.store.observeRecords())
        defer { task.cancel() }
        #expect(await eventually { seen.count == 1 }, "the current value comes first")
        #expect(seen.last == [])
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        try await session.set("site", to: .text("Pump 4"))
        #expect(await eventually { seen.last?.count == 1 }, "the new draft reaches the list without anyone asking")
        #expect(seen.last?.first?.id == session.recordID)
        #expect(seen.last?.first?.syncMark == .draft)
        #expect(try await session.complete() == .submitted)
        #expect(await eventually { seen.last?.first?.syncMark == .waiting }, "submitted and queued: the mark follows")
    }

    @Test func aPulledPageOfAThousandRecordsIsOneEmission() async throws {
        let fixture = try await Fixture()
        let (task, seen) = collect(fixture.store.observeRecords())
        defer { task.cancel() }
        #expect(await eventually { seen.count == 1 })
        let page = try Self.page(records: 1_000, cursor: 1_000)
        guard case .applied(let applied, _) = try await fixture.store.applyPullPage(page) else {
            Issue.record("the page was not applied")
            return
        }
        #expect(applied == 1_000)
        #expect(await eventually { seen.last?.count == 1_000 })
        #expect(seen.count == 2, "one value for the page, not one per record (got \(seen.count))")
        #expect(seen.last?.allSatisfy { $0.syncMark == .synced } == true)
    }

    @Test func aCommitThatLeavesTheValueAsItWasEmitsNothing() async throws {
        let fixture = try await Fixture()
        let (task, seen) = collect(fixture.store.observeRecords(RecordListQuery(states: [.submitted])))
        defer { task.cancel() }
        #expect(await eventually { seen.count == 1 })
        // Commits to the observed tables that do not change the submitted list: a draft, edited twice.
        let draft = try await fixture.draft()
        try await fixture.store.deleteDraft(draft)
        let submitted = try await fixture.submitted(site: "Roof")
        #expect(await eventually { seen.last?.map(\.id) == [submitted] })
        #expect(seen.values.map { $0.map(\.id) } == [[], [submitted]], "the draft's commits emitted nothing")
    }

    @Test func oneRecordFollowsItsAnswersAndTheConflictsListFollowsTheLog() async throws {
        let fixture = try await Fixture()
        let id = try await fixture.draft(site: "Depot")
        let (recordTask, record) = collect(fixture.store.observeRecord(id))
        let (conflictsTask, conflicts) = collect(fixture.store.observeConflicts())
        defer { recordTask.cancel(); conflictsTask.cancel() }
        #expect(await eventually { record.last??.answers["site"] == .text("Depot") })
        let session = try await fixture.store.resumeDraft(id)
        try await session.set("site", to: .text("Depot North"))
        #expect(await eventually { record.last??.answers["site"] == .text("Depot North") })
        #expect(record.last??.waitingChanges ?? 0 > 0)
        try await session.dismiss(reason: .escape)

        #expect(await eventually { conflicts.count == 1 })
        try await fixture.store.pool.write { db in
            try DraftStore.logConflict(db, record: id.uuidString.lowercased(), field: "priority", policy: "manual",
                local: nil, remote: nil, open: true, now: 0)
        }
        #expect(await eventually { conflicts.last?.count == 1 })
        #expect(await eventually { record.last??.openConflicts.map(\.fieldID) == ["priority"] })
        _ = try await fixture.store.resolveConflict(record: id, field: "priority", choice: .value(.choice("high")))
        #expect(await eventually { conflicts.last == [] })
    }

    /// A pull page with record `id` at revision 1, unchanged, carrying `review`.
    static func reviewedPage(_ id: UUID, _ review: RecordReview?, cursor: Int64) throws -> [UInt8] {
        let stamp = FieldState(value: .text("Pulled"), revision: 1, hlc: HybridTimestamp(rawValue: 1), clientID: "another-device")
        let record = RecordEnvelope(recordID: id, form: FormKey(id: "follow-up-job", version: 1), state: .submitted, revision: 1,
            sequence: cursor, author: "alice", review: review, fields: RecordFields(["site": stamp]))
        return PullPage(changes: [record], cursor: cursor, hasMore: false, serverClock: HybridTimestamp(rawValue: 1)).jsonBytes()
    }

    /// The office reviews a record nobody edited: the next pull brings the same revision with a review, which
    /// changes only `record_reviews` (a WITHOUT ROWID table SQLite reports nothing of). The record's observer
    /// still sees the comment.
    @Test func aReviewThatArrivesWithoutAnEditReachesTheRecordsObserver() async throws {
        let fixture = try await Fixture()
        let id = UUID()
        func page(_ review: RecordReview?, cursor: Int64) throws -> [UInt8] { try Self.reviewedPage(id, review, cursor: cursor) }
        _ = try await fixture.store.applyPullPage(try page(nil, cursor: 1))
        let (task, seen) = collect(fixture.store.observeRecord(id))
        defer { task.cancel() }
        #expect(await eventually { seen.last??.record.id == id })
        #expect(seen.last??.record.review == nil)
        _ = try await fixture.store.applyPullPage(try page(RecordReview(state: .hasIssues, comment: "Photograph the meter"), cursor: 2))
        #expect(await eventually { seen.last??.record.review?.comment == "Photograph the meter" },
            "the review reached the observer (values: \(seen.values.map { $0?.record.review?.state.rawValue ?? "none" }))")
    }

    /// The same review reaches the records list: the record is marked as needing changes, with the comment.
    @Test func aReviewThatArrivesWithoutAnEditReachesTheRecordsList() async throws {
        let fixture = try await Fixture()
        let id = UUID()
        func page(_ review: RecordReview?, cursor: Int64) throws -> [UInt8] { try Self.reviewedPage(id, review, cursor: cursor) }
        _ = try await fixture.store.applyPullPage(try page(nil, cursor: 1))
        let (task, seen) = collect(fixture.store.observeRecords())
        defer { task.cancel() }
        #expect(await eventually { seen.last?.map(\.id) == [id] })
        #expect(seen.last?.first?.review == nil)
        let review = RecordReview(state: .rejected, comment: "Photograph the meter")
        _ = try await fixture.store.applyPullPage(try page(review, cursor: 2))
        #expect(await eventually { seen.last?.first?.review == review },
            "the review reached the list (values: \(seen.values.map { $0.first?.review?.state.rawValue ?? "none" }))")
        #expect(try await fixture.store.recordListSummaries().first?.review == review)
    }

    @Test func theSyncStatusFollowsQueuedChanges() async throws {
        let fixture = try await Fixture()
        let (task, seen) = collect(fixture.store.observeSyncStatus())
        defer { task.cancel() }
        #expect(await eventually { seen.last?.queuedRecords == 0 })
        _ = try await fixture.submitted()
        #expect(await eventually { seen.last?.queuedRecords == 1 })
    }

    /// The real `fieldsheet` binary writes a record into the same home while the list is observed.
    @Test func aCommitFromAnotherProcessReachesTheObserver() async throws {
        let fixture = try await Fixture()
        let (task, seen) = collect(fixture.store.observeRecords(RecordListQuery(text: "from the cli")))
        defer { task.cancel() }
        #expect(await eventually { seen.count == 1 })
        let home = fixture.directory.url.path
        let result = try await Task.detached {
            try await Subprocess.run(CLIHome.binary, ["--home", home, "fill", "follow-up-job", "--set", "site=Written from the CLI", "--complete"])
        }.value
        #expect(result.status == 0, "\(result.output)")
        let id = try #require(CLIHome.recordID(result).flatMap(UUID.init(uuidString:)))
        #expect(await eventually { seen.last?.map(\.id) == [id] }, "another process's commit was noticed (values: \(seen.values.map(\.count)))")
    }

    @Test func cancellingTheIteratingTaskEndsTheObservation() async throws {
        let fixture = try await Fixture()
        let (task, seen) = collect(fixture.store.observeRecords())
        #expect(await eventually { seen.count == 1 })
        #expect(fixture.store.changeMonitor.activeUsers == 1)
        task.cancel()
        try await task.value
        #expect(await eventually { fixture.store.changeMonitor.activeUsers == 0 }, "the watch on other processes was released")
        _ = try await fixture.draft()
        #expect(seen.count == 1, "nothing arrives after cancellation")
    }

    // MARK: - Helpers

    /// A pull page of `records` new follow-up jobs as the server would send it.
    static func page(records: Int, cursor: Int64) throws -> [UInt8] {
        let stamp = FieldState(value: .text("Pulled"), revision: 1, hlc: HybridTimestamp(rawValue: 1), clientID: "another-device")
        let changes = (0..<records).map { index in
            RecordEnvelope(recordID: UUID(), form: FormKey(id: "follow-up-job", version: 1), state: .submitted, revision: 1,
                sequence: Int64(index + 1), author: "alice", fields: RecordFields(["site": stamp]))
        }
        return PullPage(changes: changes, cursor: cursor, hasMore: false, serverClock: HybridTimestamp(rawValue: 1)).jsonBytes()
    }
}

/// The values an observation delivered so far.
final class Seen<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Value] = []

    func append(_ value: Value) { lock.withLock { stored.append(value) } }
    var values: [Value] { lock.withLock { stored } }
    var count: Int { values.count }
    var last: Value? { values.last }
}

/// Iterates `observation` in a task of its own, keeping every value.
func collect<Value>(_ observation: StoreObservation<Value>) -> (Task<Void, any Error>, Seen<Value>) {
    let seen = Seen<Value>()
    let task = Task {
        for try await value in observation { seen.append(value) }
    }
    return (task, seen)
}


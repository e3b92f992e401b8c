import Foundation
import FieldSheetTesting
import FormModel
import GRDB
import SyncCore
import Testing
@testable import DraftStore

@Suite("Pull pages and edits against what the server holds")
struct SyncApplyTests {
    /// A pull page with one record of the follow-up job form, as the server writes it.
    static func page(_ record: UUID, version: Int = 1, revision: Int64, site: String, cursor: Int64) -> [UInt8] {
        let fields = RecordFields(["site": FieldState(value: .text(site), revision: revision, hlc: HybridTimestamp(rawValue: 99), clientID: "other-device")])
        var writer = PullPageWriter()
        writer.append(RecordEnvelope(
            recordID: record, form: FormKey(id: "follow-up-job", version: version), state: .draft, revision: revision,
            sequence: cursor, author: "someone", fields: fields))
        return writer.finish(cursor: cursor, hasMore: false, serverClock: HybridTimestamp(rawValue: 100))
    }

    /// An attachment this device sent in full, that a pull page now says the server waits for (it removed the
    /// bytes while nothing referred to them): it is sent again. One the device only downloaded is left alone.
    @Test func anAttachmentSentBeforeIsSentAgainWhenAPullSaysTheServerLacksIt() async throws {
        let fixture = try await Fixture()
        let sent = String(repeating: "a", count: 64)
        let downloaded = String(repeating: "b", count: 64)
        try await fixture.store.pool.write { db in
            try db.execute(sql: """
                INSERT INTO blobs (sha256, bytes, type, stored, upload, transferred, added_at) VALUES
                    (?, 10, 'image/jpeg', 1, 'done', 10, 0), (?, 10, 'image/jpeg', 1, 'none', 10, 0)
                """, arguments: [sent, downloaded])
        }
        let fields = RecordFields(["site": FieldState(value: .text("Depot"), revision: 1, hlc: HybridTimestamp(rawValue: 99), clientID: "other-device")])
        var writer = PullPageWriter()
        writer.append(RecordEnvelope(
            recordID: UUID(), form: FormKey(id: "follow-up-job", version: 1), state: .submitted, revision: 1,
            sequence: 1, author: "someone", missingAttachments: [sent, downloaded], fields: fields))
        guard case .applied = try await fixture.store.applyPullPage(writer.finish(cursor: 1, hasMore: false, serverClock: HybridTimestamp(rawValue: 100))) else {
            Issue.record("the page was not applied")
            return
        }
        let states = try await fixture.store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT sha256, upload, transferred FROM blobs ORDER BY sha256").map { "\($0[0] as String):\($0[1] as String):\($0[2] as Int64)" }
        }
        #expect(states == ["\(sent):waiting:0", "\(downloaded):none:10"])
    }

    func siteBases(_ fixture: Fixture, _ record: UUID) async throws -> [Int64] {
        try await fixture.store.pool.read { db in
            try Int64.fetchAll(db, sql: "SELECT base_revision FROM outbox WHERE record_id = ? AND field_id = 'site' ORDER BY mutation_id", arguments: [record.lowercased])
        }
    }

    /// The person has been looking at their own unsent value, not at the one a pull brought beneath it:
    /// a new edit keeps the unsent edit's base, so the server meets the other value as a conflict.
    @Test func anEditOverAnUnsentEditKeepsItsBaseAfterAPull() async throws {
        let fixture = try await Fixture()
        let record = try await fixture.draft(site: "mine")
        _ = try await fixture.store.prepareOutgoing(limit: 10)  // sent, outcome not back yet
        guard case .applied(let count, _) = try await fixture.store.applyPullPage(Self.page(record, revision: 2, site: "theirs", cursor: 5)) else {
            Issue.record("the page was not applied")
            return
        }
        #expect(count == 1)
        let pulled = try #require(try await fixture.store.record(record))
        #expect(pulled.serverRevision == 2)
        #expect(pulled.answers["site"] == .text("mine"), "the unsent edit stays on top")
        let session = try await fixture.store.resumeDraft(record)
        try await session.set("site", to: .text("mine, again"))
        try await session.dismiss(reason: .escape)
        #expect(try await siteBases(fixture, record) == [0, 0], "not 2: the person never saw \"theirs\"")
    }

    @Test func anEditWithNothingPendingIsBasedOnTheServerRevision() async throws {
        let fixture = try await Fixture()
        let record = UUID()
        guard case .applied = try await fixture.store.applyPullPage(Self.page(record, revision: 3, site: "theirs", cursor: 7)) else {
            Issue.record("the page was not applied")
            return
        }
        let session = try await fixture.store.resumeDraft(record)
        try await session.set("site", to: .text("mine"))
        try await session.dismiss(reason: .escape)
        #expect(try await siteBases(fixture, record) == [3])
    }

    @Test func aPageNamingAnUnknownFormVersionAppliesNothingAndNamesIt() async throws {
        let fixture = try await Fixture()
        let record = UUID()
        let page = Self.page(record, version: 2, revision: 1, site: "theirs", cursor: 4)
        let first = try await fixture.store.applyPullPage(page)
        guard case .needsForms(let forms) = first else {
            Issue.record("expected the missing form version, got \(first)")
            return
        }
        #expect(forms == [FormKey(id: "follow-up-job", version: 2)])
        #expect(try await fixture.store.record(record) == nil)
        #expect(try await fixture.store.syncCursor() == 0, "nothing of the page, not even its cursor")
        try await fixture.store.importForms([SampleForms.followUpJob(version: 2)])
        guard case .applied(let count, let end) = try await fixture.store.applyPullPage(page) else {
            Issue.record("the page was not applied once the form was there")
            return
        }
        #expect(count == 1 && end.cursor == 4)
        #expect(try await fixture.store.syncCursor() == 4)
    }

    @Test func anUnreadablePageAppliesNothing() async throws {
        let fixture = try await Fixture()
        let record = UUID()
        let page = Self.page(record, revision: 1, site: "theirs", cursor: 4)
        let cut = Array(page.prefix(page.count - 20))
        let application = try await fixture.store.applyPullPage(cut)
        guard case .unreadable = application else {
            Issue.record("expected an unreadable page, got \(application)")
            return
        }
        #expect(try await fixture.store.record(record) == nil, "the record read before the cut is not kept")
        #expect(try await fixture.store.syncCursor() == 0)
    }

    /// One push's outcomes applied as one batch (the records read, and their settled edits removed, in one statement
    /// each): a record applied settles its edits; one edited again while its change was in flight keeps the newer
    /// edit, based now on the revision the server made; one refused drops its edits and logs each as refused.
    @Test func aBatchOfOutcomesSettlesEachRecordAsItsOwnOutcomeSays() async throws {
        let fixture = try await Fixture()
        let applied = try await fixture.draft(site: "North", count: 1)
        let editedAgain = try await fixture.draft(site: "South", count: 2)
        let refused = try await fixture.draft(site: "East", count: 3)
        let batch = try await fixture.store.prepareOutgoing(limit: 10)
        #expect(batch.map(\.recordID) == [applied, editedAgain, refused], "frozen in the order their edits were made")
        var refusedFields: [String] = []
        for (frozen, expected) in zip(batch, [("North", 1), ("South", 2), ("East", 3)]) {
            var reader = JSONReader(Array(frozen.body.utf8))
            let mutation = try Mutation.read(from: &reader)
            if frozen.recordID == refused { refusedFields = mutation.changes.keys.sorted() }
            #expect(mutation.recordID == frozen.recordID && mutation.mutationID == frozen.mutationID)
            #expect(mutation.changes["site"]?.value == .text(expected.0) && mutation.changes["count"]?.value == .integer(expected.1))
            #expect(mutation.changes.values.allSatisfy { $0.baseRevision == 0 })
        }
        let session = try await fixture.store.resumeDraft(editedAgain)
        try await session.set("site", to: .text("South, again"))
        try await session.dismiss(reason: .escape)

        let problem = ProblemDetails(type: "about:blank", title: "Refused", status: 422, detail: "The site is closed.")
        let outcomes = batch.map { frozen in
            frozen.recordID == refused
                ? MutationOutcome(mutationID: frozen.mutationID, recordID: frozen.recordID, status: .rejected, problem: problem)
                : MutationOutcome(mutationID: frozen.mutationID, recordID: frozen.recordID, status: .applied, revision: 1, changed: true)
        }
        #expect(try await fixture.store.applyOutcomes(outcomes, serverClock: HybridTimestamp(rawValue: 5)) == refusedFields.count, "each refused field")

        let first = try #require(try await fixture.store.record(applied))
        #expect(first.serverRevision == 1 && first.pending.isEmpty)
        #expect(first.synced["site"]?.value == .text("North") && first.synced["count"]?.value == .integer(1))
        let second = try #require(try await fixture.store.record(editedAgain))
        #expect(second.serverRevision == 1 && second.pending == ["site": .text("South, again")])
        #expect(second.synced["site"]?.value == .text("South") && second.answers["count"] == .integer(2))
        #expect(try await siteBases(fixture, editedAgain) == [1], "the edit made on top of the value the server now holds at revision 1")
        let third = try #require(try await fixture.store.record(refused))
        #expect(third.serverRevision == 0 && third.pending.isEmpty && third.answers.isEmpty)
        let logged = try await fixture.store.conflicts(record: refused)
        #expect(refusedFields.contains("site") && refusedFields.contains("count"))
        #expect(logged.map(\.fieldID).sorted() == refusedFields && logged.allSatisfy { $0.policy == "rejected" })
        #expect(try await fixture.store.prepareOutgoing(limit: 10).map(\.recordID) == [editedAgain], "only the edit made since is left to send")
        // Outcomes of mutations already applied are ignored.
        #expect(try await fixture.store.applyOutcomes(outcomes, serverClock: HybridTimestamp(rawValue: 6)) == 0)
        #expect(try await fixture.store.record(editedAgain)?.pending == ["site": .text("South, again")])
    }

    /// The batch a push freezes comes with each mutation's value, the one its stored body holds; given back with
    /// the outcomes, it is applied as the body would be. A mutation frozen by an earlier attempt comes without it
    /// (its body is read when applied).
    @Test func aFrozenBatchGivenBackWithItsOutcomesIsAppliedAsItsBodiesSay() async throws {
        let fixture = try await Fixture()
        let first = try await fixture.draft(site: "North", count: 1)
        let second = try await fixture.draft(site: "South", count: 2)
        let batch = try await fixture.store.prepareOutgoingBatch(limit: 10).mutations
        #expect(batch.map(\.recordID) == [first, second])
        for frozen in batch {
            var reader = JSONReader(Array(frozen.body.utf8))
            #expect(try frozen.mutation == Mutation.read(from: &reader), "the value is the body's mutation")
        }
        let again = try await fixture.store.prepareOutgoingBatch(limit: 10).mutations
        #expect(again.map(\.mutationID) == batch.map(\.mutationID) && again.allSatisfy { $0.mutation == nil }, "frozen before: read from the body")

        // The first outcome with the batch as frozen, the second with the batch of the retry: the value, then the body.
        let outcomes = batch.map { MutationOutcome(mutationID: $0.mutationID, recordID: $0.recordID, status: .applied, revision: 1, changed: true) }
        #expect(try await fixture.store.applyOutcomes([outcomes[0]], serverClock: HybridTimestamp(rawValue: 5), sent: batch) == 0)
        #expect(try await fixture.store.applyOutcomes([outcomes[1]], serverClock: HybridTimestamp(rawValue: 5), sent: again) == 0)
        for (record, site, count) in [(first, "North", 1), (second, "South", 2)] {
            let applied = try #require(try await fixture.store.record(record))
            #expect(applied.serverRevision == 1 && applied.pending.isEmpty)
            #expect(applied.synced["site"]?.value == .text(site) && applied.synced["count"]?.value == .integer(count))
            #expect(applied.synced["site"]?.revision == 1 && applied.synced["site"]?.clientID == fixture.store.deviceID)
        }
        #expect(try await fixture.store.prepareOutgoing(limit: 10).isEmpty)
    }

    /// A frozen mutation given back under the id of another record's mutation stands in for nothing: each record's
    /// stored body is read instead, so neither takes the other's values.
    @Test func aMutationGivenBackForAnotherRecordIsNotApplied() async throws {
        let fixture = try await Fixture()
        let first = try await fixture.draft(site: "North", count: 1)
        let second = try await fixture.draft(site: "South", count: 2)
        let batch = try await fixture.store.prepareOutgoingBatch(limit: 10).mutations
        try #require(batch.count == 2 && batch.allSatisfy { $0.mutation != nil })
        var crossed = batch
        crossed[0].mutation = batch[1].mutation
        crossed[1].mutation = batch[0].mutation
        let outcomes = batch.map { MutationOutcome(mutationID: $0.mutationID, recordID: $0.recordID, status: .applied, revision: 1, changed: true) }
        #expect(try await fixture.store.applyOutcomes(outcomes, serverClock: HybridTimestamp(rawValue: 5), sent: crossed) == 0)
        for (record, site, count) in [(first, "North", 1), (second, "South", 2)] {
            let applied = try #require(try await fixture.store.record(record))
            #expect(applied.serverRevision == 1 && applied.pending.isEmpty)
            #expect(applied.synced["site"]?.value == .text(site) && applied.synced["count"]?.value == .integer(count))
        }
    }

    /// A push's mutation ids, drawn for the batch at once: random UUIDs (version 4, lowercase), none repeated, across
    /// the draws a large batch needs.
    @Test func mutationIDsAreDistinctRandomUUIDs() {
        var ids = MutationIDs(count: 1_000)
        var seen = Set<String>()
        for _ in 0..<1_000 {
            let id = ids.next()
            #expect(id == UUID(uuidString: id)?.uuidString.lowercased(), "\(id)")
            let characters = Array(id)
            #expect(characters[14] == "4" && "89ab".contains(characters[19]), "version 4, RFC 9562 variant: \(id)")
            seen.insert(id)
        }
        var more = MutationIDs(count: 1)
        for _ in 0..<40 { seen.insert(more.next()) }
        #expect(seen.count == 1_040)
    }

    /// An outcome that leaves an answer as it was moves its sealed bytes as they are stored: only the answers that
    /// changed are sealed again (each seal takes a fresh nonce, so bytes that stay the same were not sealed again),
    /// and every answer still opens at its place.
    @Test func anOutcomeMovesTheAnswersItLeftAsTheyWereSealedAsTheyAre() async throws {
        let fixture = try await Fixture()
        let record = try await fixture.draft(site: "North", count: 1)
        func push(revision: Int64) async throws {
            let batch = try await fixture.store.prepareOutgoing(limit: 10)
            #expect(batch.map(\.recordID) == [record])
            let outcomes = batch.map { MutationOutcome(mutationID: $0.mutationID, recordID: $0.recordID, status: .applied, revision: revision, changed: true) }
            try await fixture.store.applyOutcomes(outcomes, serverClock: HybridTimestamp(rawValue: 5 + revision))
        }
        /// Each answer as the record's stored fields hold it.
        func stored() async throws -> [String: String] {
            let fields = try await fixture.store.pool.read { db in
                try String.fetchOne(db, sql: "SELECT fields FROM records WHERE id = ?", arguments: [record.lowercased])
            }
            var answers: [String: String] = [:]
            _ = try DeviceCipher.rewriteValues(Array(try #require(fields).utf8)) { key, raw, writer in
                answers[key] = String(decoding: raw, as: UTF8.self)
                writer.raw(raw)
            }
            return answers
        }
        try await push(revision: 1)
        let before = try await stored()
        #expect(before["site"] != nil && before["count"] != nil && before.count > 2, "site, count and the form's defaults: \(before.keys.sorted())")
        #expect(before.values.allSatisfy { $0.hasPrefix("\"") && !$0.contains("North") }, "sealed at rest: \(before)")

        let session = try await fixture.store.resumeDraft(record)
        try await session.set("count", to: .integer(2))
        try await session.dismiss(reason: .escape)
        try await push(revision: 2)
        let after = try await stored()
        #expect(after.keys.sorted() == before.keys.sorted())
        for key in before.keys where key != "count" {
            #expect(after[key] == before[key], "\(key): the answer the outcome left as it was, moved sealed")
        }
        #expect(after["count"] != before["count"] && after["count"]?.hasPrefix("\"") == true, "the changed answer, sealed again")
        let applied = try #require(try await fixture.store.record(record))
        #expect(applied.serverRevision == 2 && applied.pending.isEmpty)
        #expect(applied.synced["site"]?.value == .text("North") && applied.synced["site"]?.revision == 1)
        #expect(applied.synced["count"]?.value == .integer(2) && applied.synced["count"]?.revision == 2)
    }

    /// A record whose every unsent edit an outcome settles loses them as one range; one that holds an edit the outcome
    /// does not settle (made since), or none, has its settled edits named one by one.
    @Test func settledEditsAreRemovedWholeOnlyForARecordWithNoOtherEdit() {
        let settled: [(record: String, key: String)] = [("a", "f1"), ("a", "f2"), ("b", "f1"), ("c", "f1"), ("d", "f1")]
        let held: [String: Set<String>] = ["a": ["f1", "f2"], "b": ["f1", "f2"], "c": ["f1"]]
        let split = DraftStore.settledEdits(settled, held: held)
        #expect(split.wholeRecords == ["a", "c"])
        #expect(split.edits.map { "\($0.record):\($0.key)" } == ["b:f1", "d:f1"])
    }
}

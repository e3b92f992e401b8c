import FieldSheetTesting
import Foundation
import GRDB
import Testing
@testable import DraftStore

/// The records-list observation reads again only the records a commit touched. Whatever the commit —
/// an edit, a submission, a deleted draft, an outbox emptied by a push, a conflict logged, resolved or
/// deleted, a rolled-back transaction — the list it holds must be the list a fresh read gives.
struct RecordListObservationTests {
    static let queries: [RecordListQuery] = [
        RecordListQuery(),
        RecordListQuery(states: [.submitted]),
        RecordListQuery(marks: [.waiting, .conflict]),
        RecordListQuery(text: "north"),
        RecordListQuery(states: [.draft, .submitted, .deleted]),
    ]

    @Test func theObservedListIsTheFreshListAfterEveryKindOfCommit() async throws {
        let seed = UInt64(Date().timeIntervalSince1970 * 1000)
        print("RecordListObservationTests seed: \(seed)")
        var random = SplitMix64(seed: seed)
        let fixture = try await Fixture()
        let observed = Self.queries.map { collect(fixture.store.observeRecords($0)) }
        defer { for (task, _) in observed { task.cancel() } }
        var records: [UUID] = []
        for step in 0..<40 {
            let operation = Int.random(in: 0..<9, using: &random)
            let target = records.randomElement(using: &random)
            let key = target?.uuidString.lowercased() ?? ""
            switch operation {
            case 0: records.append(try await fixture.draft(site: Bool.random(using: &random) ? "North gate" : "South gate"))
            case 1: records.append(try await fixture.submitted(site: "Roof north"))
            case 2 where target != nil:
                // An edit of a draft or a submitted record: a new outbox row and a newer updated_at.
                if let session = try? await fixture.store.resumeDraft(try #require(target)) {
                    try await session.set("site", to: .text("Edited north \(step)"))
                    try await session.dismiss(reason: .escape)
                }
            case 3 where target != nil:
                // What an acknowledged push does: the record's outbox rows go.
                try await fixture.store.pool.write { db in try db.execute(sql: "DELETE FROM outbox WHERE record_id = ?", arguments: [key]) }
            case 4 where target != nil:
                try await fixture.store.pool.write { db in
                    try DraftStore.logConflict(db, record: key, field: "priority", policy: "manual", local: nil, remote: nil, open: true, now: 0)
                }
            case 5 where target != nil:
                let sql = Bool.random(using: &random)
                    ? "UPDATE conflicts SET resolved_at = 1 WHERE record_id = ?"
                    : "DELETE FROM conflicts WHERE record_id = ?"
                try await fixture.store.pool.write { db in try db.execute(sql: sql, arguments: [key]) }
            case 6 where target != nil:
                try? await fixture.store.deleteDraft(try #require(target))
            case 7 where target != nil:
                // A transaction that rolls back changes nothing anyone should see.
                _ = try? await fixture.store.pool.write { db in
                    try db.execute(sql: "UPDATE records SET state = 'deleted' WHERE id = ?", arguments: [key])
                    throw CancellationError()
                }
            case 8 where target != nil:
                // What a pull does when the office reviewed a record: `record_reviews` (WITHOUT ROWID, so
                // announced by hand) changes, the record row does not.
                let state = ["hasIssues", "approved", "rejected"][Int.random(in: 0..<3, using: &random)]
                try await fixture.store.pool.write { db in
                    try db.execute(sql: """
                        INSERT INTO record_reviews (record_id, state, comment)
                        SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM records WHERE id = ?1)
                        ON CONFLICT (record_id) DO UPDATE SET state = excluded.state, comment = excluded.comment
                        """, arguments: [key, state, "step \(step)"])
                    try db.notifyChanges(in: Table("record_reviews"))
                }
            default: records.append(try await fixture.draft(site: "North yard"))
            }
            for (index, query) in Self.queries.enumerated() {
                let fresh = try await fixture.store.recordListSummaries(query)
                let seen = observed[index].1
                #expect(await eventually { seen.last == fresh },
                    "seed \(seed), step \(step) (operation \(operation)), query \(index): observed \(seen.last?.count ?? -1) records, fresh read \(fresh.count)")
            }
        }
    }

    @Test func aRolledBackTransactionEmitsNothing() async throws {
        let fixture = try await Fixture()
        let id = try await fixture.submitted()
        let (task, seen) = collect(fixture.store.observeRecords())
        defer { task.cancel() }
        #expect(await eventually { seen.last?.map(\.id) == [id] })
        _ = try? await fixture.store.pool.write { db in
            try db.execute(sql: "DELETE FROM records WHERE id = ?", arguments: [id.uuidString.lowercased()])
            throw CancellationError()
        }
        // A later commit that changes the list shows the rolled-back one left nothing behind.
        let second = try await fixture.submitted(site: "Gate")
        #expect(await eventually { seen.last?.count == 2 })
        #expect(Set(seen.last?.map(\.id) ?? []) == [id, second])
        #expect(seen.values.allSatisfy { $0.contains { $0.id == id } }, "no value ever lacked the record the rollback deleted")
    }
}

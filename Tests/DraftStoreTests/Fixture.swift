import Foundation
import FieldSheetTesting
import FormModel
import GRDB
@testable import DraftStore

/// A fresh device database in its own temporary directory, with the follow-up job form imported.
struct Fixture {
    let directory = TemporaryDirectory("draftstore")
    let store: DraftStore

    init(editableAfterSubmit: Bool = true, options: DraftStore.Options = .init()) async throws {
        store = try DraftStore(home: directory.url, options: options)
        try await store.importForms([SampleForms.followUpJob(editableAfterSubmit: editableAfterSubmit)])
    }

    /// Opens the same database again, as the next process would.
    func reopen() throws -> DraftStore {
        try DraftStore(home: directory.url)
    }

    /// Makes every open presentation look as if its process had been killed.
    func killOwnersOfOpenPresentations() async throws {
        try await store.pool.write { db in try db.execute(sql: "UPDATE presentations SET owner = '0:0'") }
    }

    /// A stored draft with `site` and `count` answered, its presentation ended.
    func draft(site: String = "B2 basement", count: Int = 2) async throws -> UUID {
        let session = try await store.newRecord(formID: "follow-up-job")
        try await session.set("site", to: .text(site))
        try await session.set("count", to: .integer(count))
        try await session.dismiss(reason: .escape)
        return session.recordID
    }

    /// A submitted record.
    func submitted(site: String = "Roof") async throws -> UUID {
        let session = try await store.newRecord(formID: "follow-up-job")
        try await session.set("site", to: .text(site))
        #expect(try await session.complete() == .submitted)
        return session.recordID
    }

    func outboxKinds(_ record: UUID) async throws -> [String] {
        try await store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT kind FROM outbox WHERE record_id = ? ORDER BY mutation_id", arguments: [record.uuidString.lowercased()])
        }
    }

    func presentationCount() async throws -> Int {
        try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM presentations") ?? 0 }
    }
}

import Testing

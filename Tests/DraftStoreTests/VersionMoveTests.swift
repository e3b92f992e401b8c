import FieldSheetTesting
import Foundation
import FormModel
import GRDB
import SyncCore
import Testing
@testable import DraftStore

/// A draft of version 1 opened on a device that holds version 2: it opens on version 2, its answers carried by
/// key (in repeat instances too), the answers version 2 takes no longer (a removed field, a field whose kind
/// changed, a removed field of a repeat) handed to the sheet once; its unsent edits go first as a change against
/// version 1, the clearing of the dropped answers after it against version 2.
struct VersionMoveTests {
    static func inspection(version: Int) throws -> FormDefinition {
        let fields = version == 1
            ? """
              { "id": "site", "kind": "text", "label": "Site" },
              { "id": "count", "kind": "integer", "label": "Technicians" },
              { "id": "gate_code", "kind": "text", "label": "Gate code" },
              { "id": "rooms", "kind": "repeat", "label": "Rooms", "instanceLabel": "Room", "fields": [
                { "id": "name", "kind": "text", "label": "Name" },
                { "id": "rating", "kind": "integer", "label": "Rating" } ] }
              """
            : """
              { "id": "site", "kind": "text", "label": "Site", "required": true },
              { "id": "count", "kind": "singleChoice", "label": "Team size", "choices": [ { "value": "small", "label": "Small" }, { "value": "large", "label": "Large" } ] },
              { "id": "phone", "kind": "text", "label": "Phone" },
              { "id": "rooms", "kind": "repeat", "label": "Rooms", "instanceLabel": "Room", "fields": [
                { "id": "name", "kind": "text", "label": "Name" } ] }
              """
        let json = """
            { "id": "inspection", "version": \(version), "title": "Inspection", "completionLabel": "Submit",
              "pages": [ { "id": "p", "fields": [ \(fields) ] } ] }
            """
        let loaded = FormLoader().load(Data(json.utf8), file: "inspection-v\(version).json")
        return try #require(loaded.loaded?.form, "\(loaded.findings)")
    }

    /// The frozen mutations of `record`, oldest first.
    static func frozen(_ store: DraftStore, _ record: UUID) async throws -> [Mutation] {
        try await store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT fs_open(body, 'mutation', mutation_id, record_id) FROM sent_mutations WHERE record_id = ? ORDER BY created_at, rowid",
                                arguments: [record.lowercased])
        }.map { body in
            var reader = JSONReader(Array(body.utf8))
            return try Mutation.read(from: &reader)
        }
    }

    @Test func aDraftOpensOnTheNewestVersionWithItsAnswersCarriedAndTheRestShownOnce() async throws {
        let directory = TemporaryDirectory("version-move")
        let store = try DraftStore(home: directory.url)
        try await store.importForms([try Self.inspection(version: 1)])
        let session = try await store.newRecord(formID: "inspection")
        try await session.set("site", to: .text("Depot"))
        try await session.set("count", to: .integer(3))
        try await session.set("gate_code", to: .text("4711"))
        let room = try await session.addInstance(to: "rooms")
        try await session.set(room + "/name", to: .text("Boiler room"))
        try await session.set(room + "/rating", to: .integer(4))
        try await session.dismiss(reason: .escape)
        let record = session.recordID

        try await store.importForms([try Self.inspection(version: 2)])
        let moved = try await store.resumeDraft(record)
        #expect(moved.form.version == 2)
        let move = try #require(moved.versionMove)
        #expect(move.from == 1 && move.to == 2 && move.formID == "inspection")
        #expect(move.dropped.map(\.key) == ["count", room + "/rating", "gate_code"].sorted())
        #expect(move.dropped.map(\.label).sorted() == ["Gate code", "Room 1 › Rating", "Technicians"])
        #expect(move.message.contains("These answers are not in version 2 of the form: "), "\(move.message)")
        #expect(move.message.contains("Gate code: 4711"), "\(move.message)")
        let answers = await moved.answers
        #expect(answers["site"] == .text("Depot") && answers[room + "/name"] == .text("Boiler room"))
        #expect(answers["count"] == nil && answers["gate_code"] == nil && answers[room + "/rating"] == nil)
        #expect(await moved.instances(of: "rooms").map(\.prefix) == [room])

        // The edits made on version 1 were frozen as a change against version 1, with every answer as it was.
        let first = try #require(try await Self.frozen(store, record).first)
        #expect(first.form == FormKey(id: "inspection", version: 1))
        #expect(first.changes["gate_code"]?.value == .text("4711") && first.changes["count"]?.value == .integer(3))
        #expect(first.changes[room + "/rating"]?.value == .integer(4))

        try await moved.set("phone", to: .text("555-0100"))
        #expect(try await moved.complete() == .submitted, "the moved draft is valid on version 2")

        // Shown once: the record is on version 2 now, and submitted records never move.
        let stored = try #require(try await store.record(record))
        #expect(stored.form.version == 2 && stored.state == .submitted)

        // After the version 1 change is answered, the rest goes as one change against version 2, clearing the
        // dropped answers.
        _ = try await store.applyOutcomes([MutationOutcome(mutationID: first.mutationID, recordID: record, status: .applied, revision: 1)],
                                          serverClock: HybridTimestamp(rawValue: 1))
        let next = try await store.prepareOutgoing(limit: 10)
        #expect(next.count == 1)
        let second = try #require(try await Self.frozen(store, record).first)
        #expect(second.form == FormKey(id: "inspection", version: 2) && second.state == .submitted)
        #expect(second.changes["phone"]?.value == .text("555-0100"))
        for key in ["gate_code", "count", room + "/rating"] {
            #expect(second.changes[key] != nil && second.changes[key]?.value == nil, "\(key) is cleared against version 2")
        }
        #expect(second.changes["site"] == nil, "a carried answer is not sent again")
    }

    @Test func aSecondOpeningShowsNothingAndADraftWithAChangeInFlightAndEditsSinceWaits() async throws {
        let directory = TemporaryDirectory("version-move")
        let store = try DraftStore(home: directory.url)
        try await store.importForms([try Self.inspection(version: 1)])
        let session = try await store.newRecord(formID: "inspection")
        try await session.set("gate_code", to: .text("4711"))
        try await session.dismiss(reason: .escape)
        let record = session.recordID
        // Sent, its answer not back yet; then edited again.
        _ = try await store.prepareOutgoing(limit: 10)
        let again = try await store.resumeDraft(record)
        try await again.set("site", to: .text("Depot"))
        try await again.dismiss(reason: .escape)

        try await store.importForms([try Self.inspection(version: 2)])
        let waiting = try await store.resumeDraft(record)
        #expect(waiting.form.version == 1 && waiting.versionMove == nil, "the edit since the change in flight goes against version 1 first")
        try await waiting.dismiss(reason: .escape)

        // The answer arrives, the edit since goes: the next opening moves it, and the one after shows nothing.
        let inFlight = try #require(try await Self.frozen(store, record).first)
        _ = try await store.applyOutcomes([MutationOutcome(mutationID: inFlight.mutationID, recordID: record, status: .applied, revision: 1)],
                                          serverClock: HybridTimestamp(rawValue: 1))
        let pending = try #require(try await store.prepareOutgoing(limit: 10).first)
        _ = try await store.applyOutcomes([MutationOutcome(mutationID: pending.mutationID, recordID: record, status: .applied, revision: 2)],
                                          serverClock: HybridTimestamp(rawValue: 2))
        let moved = try await store.resumeDraft(record)
        #expect(moved.form.version == 2 && moved.versionMove?.dropped.map(\.key) == ["gate_code"])
        try await moved.dismiss(reason: .escape)
        let later = try await store.resumeDraft(record)
        #expect(later.form.version == 2 && later.versionMove == nil)
        #expect(await later.answers == ["site": .text("Depot")])
        try await later.dismiss(reason: .escape)
    }
}

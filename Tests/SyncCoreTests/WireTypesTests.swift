import Foundation
import FormModel
import Testing
@testable import SyncCore

struct WireTypesTests {
    @Test func aRecordsValuesLeaveClearedFieldsOut() {
        let clock = HybridTimestamp(millis: 7, counter: 0)
        var fields: RecordFields = [
            "a": FieldState(value: .text("x"), revision: 1, hlc: clock, clientID: "d"),
            "b": FieldState(value: .integer(2), revision: 1, hlc: clock, clientID: "d"),
        ]
        #expect(fields.values == ["a": .text("x"), "b": .integer(2)])
        fields["c"] = FieldState(value: nil, revision: 2, hlc: clock, clientID: "d")
        #expect(fields.values == ["a": .text("x"), "b": .integer(2)])
        #expect(RecordFields().values.isEmpty)
    }

    @Test func aPushRequestRoundTripsThroughJSON() throws {
        let request = PushRequest(clientID: "device-1", clock: HybridTimestamp(millis: 7, counter: 1), mutations: [
            Mutation(mutationID: "m1", recordID: UUID(), form: FormKey(id: "job", version: 2), state: .submitted, changes: [
                "notes": FieldChange(value: .text("hi"), baseRevision: 0, hlc: HybridTimestamp(millis: 7, counter: 0)),
                "cleared": FieldChange(value: nil, baseRevision: 3, hlc: HybridTimestamp(millis: 7, counter: 1)),
            ])
        ])
        let bytes = request.jsonBytes()
        #expect(String(decoding: bytes, as: UTF8.self).contains("\"value\":null"))
        #expect(try PushRequest(jsonBytes: bytes) == request)
        let read = try ReadPushRequest(jsonBytes: bytes, maximumMutations: 1)
        #expect(read.mutations == request.mutations && read.clock == request.clock && read.clientID == request.clientID)
        #expect(read.mutationRanges.map { Array(bytes[$0]) } == [request.mutations[0].jsonBytes()], "each mutation is sent in its canonical form")
        #expect(throws: JSONReadError.self) { try PushRequest(jsonBytes: bytes, maximumMutations: 0) }
    }

    @Test func aPullPageRoundTripsThroughJSON() throws {
        let fields: RecordFields = ["n": FieldState(value: .integer(3), revision: 2, hlc: HybridTimestamp(millis: 1, counter: 0), clientID: "d")]
        let page = PullPage(changes: [
            RecordEnvelope(recordID: UUID(), form: FormKey(id: "job", version: 1), state: .draft, revision: 2, sequence: 9, author: "ana",
                           missingAttachments: [String(repeating: "f", count: 64)], fields: fields)
        ], cursor: 9, hasMore: false, serverClock: HybridTimestamp(millis: 10, counter: 0))
        let read = try PullPage(jsonBytes: page.jsonBytes())
        #expect(read == page)
        #expect(try read.changes.first?.fields == fields)
        #expect(read.changes.first?.missingAttachments == [String(repeating: "f", count: 64)], "missingAttachments travels in the one codec")
    }

    @Test func aMutationOutcomeWritesItsRecordIDInLowerCaseUnlessEchoingIt() throws {
        let recordID = try #require(UUID(uuidString: "7C37E370-0B6A-4F53-9D3C-1E2A3B4C5D6E"))
        let stamp = FieldState(value: .text("a"), revision: 1, hlc: HybridTimestamp(millis: 5, counter: 0), clientID: "d1")
        let outcome = MutationOutcome(
            mutationID: "m1", recordID: recordID, status: .merged, revision: 4,
            conflicts: [ConflictEntry(fieldID: "notes", policy: .lastWriterWins, winner: .client, server: stamp, client: stamp)], changed: true)
        let bytes = try JSONSerialization.jsonObject(with: Data(outcome.jsonBytes())) as? NSDictionary
        #expect(bytes?["recordId"] as? String == "7c37e370-0b6a-4f53-9d3c-1e2a3b4c5d6e")
        #expect(try MutationOutcome(jsonBytes: outcome.jsonBytes()) == outcome)
        var writer = JSONWriter()
        outcome.write(to: &writer, recordIDAsSent: "7C37E370-0B6A-4F53-9D3C-1E2A3B4C5D6E")
        #expect(String(decoding: writer.bytes, as: UTF8.self).contains(#""recordId":"7C37E370-0B6A-4F53-9D3C-1E2A3B4C5D6E""#))
    }

    @Test func aConflictEntryWithoutKindOrOpenIsAFieldEntryNotOpen() throws {
        let entry = try ConflictEntry(jsonBytes: Array(#"{"fieldId":"notes","policy":"lastWriterWins","winner":"server"}"#.utf8))
        #expect(entry == ConflictEntry(kind: .field, fieldID: "notes", policy: .lastWriterWins, winner: .server, open: false, server: nil, client: nil))
    }
}

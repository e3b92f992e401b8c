import Foundation
import FormModel
import Testing
@testable import SyncCore

struct WireTypesTests {
    @Test func aPushRequestRoundTripsThroughJSON() throws {
        let request = PushRequest(clientID: "device-1", clock: HybridTimestamp(millis: 7, counter: 1), mutations: [
            Mutation(mutationID: "m1", recordID: UUID(), form: FormKey(id: "job", version: 2), state: .submitted, changes: [
                "notes": FieldChange(value: .text("hi"), baseRevision: 0, hlc: HybridTimestamp(millis: 7, counter: 0)),
                "cleared": FieldChange(value: nil, baseRevision: 3, hlc: HybridTimestamp(millis: 7, counter: 1)),
            ])
        ])
        let data = try JSONEncoder().encode(request)
        #expect(String(decoding: data, as: UTF8.self).contains("\"value\":null"))
        #expect(try JSONDecoder().decode(PushRequest.self, from: data) == request)
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
}

import Foundation
import FormModel
import Testing
@testable import SyncCore

/// The entity wire types: a record's entity change as the record stores it, and the scope's spellings.
struct EntityWireTests {
    @Test func anEntityChangeRoundTripsThroughTheRecordAsTheSameBytes() throws {
        let change = RecordEntityChange(
            list: "households", entityID: UUID(uuidString: "6f1c9a52-3b1e-4d2a-9c55-0a1b2c3d4e5f")!, action: .update, baseRevision: 4, label: "Ana (5)")
        let answer = change.answer
        guard case .text(let json) = answer else {
            Issue.record("expected text, got \(answer.tag)")
            return
        }
        #expect(json == #"{"action":"update","baseRevision":4,"entityId":"6F1C9A52-3B1E-4D2A-9C55-0A1B2C3D4E5F","label":"Ana (5)","list":"households"}"#)
        #expect(try RecordEntityChange(answer: answer) == change)
        #expect(change.answer == answer)
    }

    @Test func anythingElseInTheFieldIsRefusedSayingWhat() {
        #expect(throws: DecodingError.self) { try RecordEntityChange(answer: .integer(3)) }
        #expect(throws: DecodingError.self) { try RecordEntityChange(answer: .text(#"{"list":"households"}"#)) }
        #expect(throws: DecodingError.self) { try RecordEntityChange(answer: .text("not json")) }
    }

    @Test(arguments: [
        ("all", EntityScope.all), ("creator", .createdByUser), ("assignee", .assignedToUser), ("property:district", .userProperty("district")),
    ])
    func scopesAreSpelledOneWay(text: String, scope: EntityScope) throws {
        #expect(EntityScope(text) == scope)
        #expect(scope.description == text)
        let json = try JSONEncoder().encode([scope])
        #expect(String(decoding: json, as: UTF8.self) == "[\"\(text)\"]")
        #expect(try JSONDecoder().decode([EntityScope].self, from: json) == [scope])
    }

    @Test func anUnknownScopeIsNone() {
        #expect(EntityScope("everyone") == nil)
        #expect(EntityScope("property:") == nil)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([EntityScope].self, from: Data(#"["everyone"]"#.utf8)) }
    }
}

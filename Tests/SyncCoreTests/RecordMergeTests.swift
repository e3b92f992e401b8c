import Foundation
import FormModel
import Testing
@testable import SyncCore

struct RecordMergeTests {
    let hlc = HybridTimestamp(millis: 5_000, counter: 0)

    func mutation(_ state: RecordState, _ changes: [String: AnswerValue?], base: Int64) -> Mutation {
        Mutation(
            mutationID: UUID().uuidString, recordID: UUID(), form: FormKey(id: "job", version: 1), state: state,
            changes: changes.mapValues { FieldChange(value: $0, baseRevision: base, hlc: hlc) })
    }

    func field(_ text: String, revision: Int64, by device: String = "b") -> FieldState {
        FieldState(value: .text(text), revision: revision, hlc: HybridTimestamp(millis: 1_000, counter: 0), clientID: device)
    }

    @Test func aNewRecordTakesEveryFieldAtRevisionOne() {
        let result = RecordMerge.merge(current: nil, mutation: mutation(.draft, ["a": .text("1"), "b": .integer(2)], base: 0), clientID: "a", recordPolicy: .manual) { _ in .manual }
        #expect(result.changed)
        #expect(result.record.revision == 1)
        #expect(result.record.fields["b"]?.value == .integer(2))
        #expect(result.conflicts.isEmpty)
    }

    @Test func fieldsTouchedByOneSideOnlyNeverConflict() {
        // The server changed "a" after the device's base; the device changed "b" only.
        let current = MergeableRecord(state: .submitted, revision: 3, fields: ["a": field("server", revision: 3), "b": field("old", revision: 1)])
        let result = RecordMerge.merge(current: current, mutation: mutation(.submitted, ["b": .text("device")], base: 1), clientID: "a", recordPolicy: .manual) { _ in .manual }
        #expect(result.conflicts.isEmpty)
        #expect(result.record.fields["a"]?.value == .text("server"))
        #expect(result.record.fields["b"]?.value == .text("device"))
        #expect(result.record.revision == 4)
        #expect(result.record.fields["b"]?.revision == 4)
    }

    @Test func aPerFieldPolicyOverridesTheFormsPolicy() {
        let current = MergeableRecord(state: .submitted, revision: 3, fields: ["a": field("s", revision: 3), "b": field("s", revision: 3)])
        let result = RecordMerge.merge(current: current, mutation: mutation(.submitted, ["a": .text("d"), "b": .text("d")], base: 1), clientID: "a", recordPolicy: .serverWins) { $0 == "b" ? .clientWins : .serverWins }
        #expect(result.record.fields["a"]?.value == .text("s"))
        #expect(result.record.fields["b"]?.value == .text("d"))
        #expect(result.conflicts.map(\.winner) == [.server, .client])
    }

    @Test func nothingNewKeepsTheRevision() {
        let current = MergeableRecord(state: .draft, revision: 2, fields: ["a": field("same", revision: 2)])
        let result = RecordMerge.merge(current: current, mutation: mutation(.draft, ["a": .text("same")], base: 0), clientID: "a", recordPolicy: .manual) { _ in .manual }
        #expect(!result.changed)
        #expect(result.record == current)
    }

    @Test func anEditAfterDeleteRestoresTheRecordAndLogsIt() {
        let current = MergeableRecord(state: .deleted, revision: 4, fields: ["a": field("kept", revision: 2)])
        let result = RecordMerge.merge(current: current, mutation: mutation(.submitted, ["b": .text("new")], base: 2), clientID: "a", recordPolicy: .lastWriterWins) { _ in .lastWriterWins }
        #expect(result.record.state == .submitted)
        #expect(result.record.fields["a"]?.value == .text("kept"))
        #expect(result.conflicts.first?.kind == .restoredAfterDelete)
        #expect(result.record.revision == 5)
    }

    @Test func aDeleteKeepsTheValuesInTheTombstone() {
        let current = MergeableRecord(state: .submitted, revision: 4, fields: ["a": field("kept", revision: 2)])
        let result = RecordMerge.merge(current: current, mutation: mutation(.deleted, [:], base: 4), clientID: "a", recordPolicy: .manual) { _ in .manual }
        #expect(result.record.state == .deleted)
        #expect(result.record.fields["a"]?.value == .text("kept"))
        #expect(result.conflicts.isEmpty)
    }
}

import FormModel
import Testing
@testable import SyncCore

@Suite("A record's outbox rows coalesced into one mutation's changes")
struct DeviceSyncCoalesceTests {
    @Test func eachFieldTakesItsOldestBaseAndNewestClockAndItsValueNow() {
        let entries = [
            DeviceSync.OutboxEntry(fields: ["a", "b"], baseRevision: 4, hlc: HybridTimestamp(rawValue: 100)),
            DeviceSync.OutboxEntry(fields: [], baseRevision: 1, hlc: HybridTimestamp(rawValue: 900)),
            DeviceSync.OutboxEntry(fields: ["b"], baseRevision: 2, hlc: HybridTimestamp(rawValue: 300)),
            DeviceSync.OutboxEntry(fields: ["a", "c"], baseRevision: 5, hlc: HybridTimestamp(rawValue: 50)),
        ]
        let changes = DeviceSync.coalesce(entries, answers: ["a": .text("A"), "b": .text("B"), "z": .text("unsent")], state: .draft)
        #expect(changes == [
            "a": FieldChange(value: .text("A"), baseRevision: 4, hlc: HybridTimestamp(rawValue: 100)),
            "b": FieldChange(value: .text("B"), baseRevision: 2, hlc: HybridTimestamp(rawValue: 300)),
            "c": FieldChange(value: nil, baseRevision: 5, hlc: HybridTimestamp(rawValue: 50)),
        ], "a state change (no fields) moves no field's base or clock; a field without an answer now is cleared")
    }

    @Test func aDeletedRecordSendsNoFieldChanges() {
        let entries = [DeviceSync.OutboxEntry(fields: ["a"], baseRevision: 1, hlc: HybridTimestamp(rawValue: 1))]
        #expect(DeviceSync.coalesce(entries, answers: ["a": .text("A")], state: .deleted).isEmpty)
    }

    @Test func randomRowsGiveTheMinimumBaseAndMaximumClockOfTheRowsNamingEachField() {
        let seed = UInt64.random(in: 1...UInt64.max)
        print("DeviceSyncCoalesceTests seed \(seed)")
        var generator = Random(seed)
        for _ in 0..<200 {
            let fields = (0..<Int.random(in: 1...8, using: &generator)).map { "f\($0)" }
            let entries = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                DeviceSync.OutboxEntry(
                    fields: fields.filter { _ in Bool.random(using: &generator) },
                    baseRevision: Int64.random(in: 0...20, using: &generator),
                    hlc: HybridTimestamp(rawValue: Int64.random(in: 0...1_000, using: &generator)))
            }
            let answers = Dictionary(uniqueKeysWithValues: fields.filter { _ in Bool.random(using: &generator) }.map { ($0, AnswerValue.text($0)) })
            var expected: [String: FieldChange] = [:]
            for field in fields {
                let naming = entries.filter { $0.fields.contains(field) }
                guard let base = naming.map(\.baseRevision).min(), let clock = naming.map(\.hlc).max() else { continue }
                expected[field] = FieldChange(value: answers[field], baseRevision: base, hlc: clock)
            }
            #expect(DeviceSync.coalesce(entries, answers: answers, state: .submitted) == expected, "seed \(seed)")
        }
    }
}

import FieldSheetTesting
import Foundation
import FormModel
import ServerStorage
import SyncCore
import Testing

/// A history entry's detail keeps its field changes in ascending id order (`HistoryDetail.changes`), the order
/// they are stored in: made from a dictionary or as the push planner makes them, it is the same detail, stored
/// as the same bytes, and read back as it was.
struct HistoryDetailTests {
    /// `count` field ids in random order with random changes (seed printed).
    static func randomFields(seed: UInt64, count: Int) -> [String: HistoryDetail.FieldDiff] {
        var random = SplitMix64(seed: seed)
        var fields: [String: HistoryDetail.FieldDiff] = [:]
        for _ in 0..<count {
            let id = "f\(random.next() % 1_000)"
            let from: AnswerValue? = random.next() % 3 == 0 ? nil : .text("was \(random.next() % 100)")
            let to: AnswerValue? = random.next() % 4 == 0 ? nil : .integer(Int(random.next() % 1_000))
            fields[id] = .init(from: from, to: to)
        }
        return fields
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func fromADictionaryOrInOrderTheSameDetailAndBytes(salt: UInt64) throws {
        let seed = UInt64(Date().timeIntervalSince1970 * 1000) &* 31 &+ salt
        print("HistoryDetailTests seed \(seed)")
        let fields = Self.randomFields(seed: seed, count: 40)
        let state = HistoryDetail.StateDiff(from: .draft, to: .submitted)
        let review = HistoryDetail.ReviewDiff(from: nil, to: .received)
        let fromDictionary = HistoryDetail(version: 3, state: state, fields: fields, review: review)
        let ordered = fields.keys.sorted().map { HistoryDetail.FieldChange(fieldID: $0, diff: fields[$0]!) }
        let inOrder = HistoryDetail(version: 3, state: state, changes: ordered, review: review)

        #expect(fromDictionary == inOrder, "seed \(seed)")
        #expect(fromDictionary.changes.map(\.fieldID) == fields.keys.sorted(), "seed \(seed)")
        #expect(inOrder.fields == fields, "seed \(seed)")
        let bytes = inOrder.jsonBytes()
        #expect(bytes == fromDictionary.jsonBytes(), "seed \(seed)")

        // The stored JSON: fields sorted by id, read back (Codable) as the same detail.
        let text = String(decoding: bytes, as: UTF8.self)
        let positions = try fields.keys.sorted().map { try #require(text.range(of: "\"\($0)\":{")).lowerBound }
        #expect(positions == positions.sorted(), "seed \(seed): \(text)")
        #expect(try HistoryDetail(jsonText: text) == inOrder, "seed \(seed)")
        // Encoded with Codable (the console's JSON): the same object again.
        let encoded = try JSONEncoder().encode(inOrder)
        #expect(try JSONDecoder().decode(HistoryDetail.self, from: encoded) == inOrder, "seed \(seed)")
        let object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(Set(try #require(object["fields"] as? [String: Any]).keys) == Set(fields.keys), "seed \(seed)")
    }

    /// Changes given out of order or with an id twice (never by the planner) are stored sorted, each id once, from
    /// its first change's `from` to its last change's `to`: the stored JSON never holds a field twice.
    @Test func changesOutOfOrderOrRepeatedAreSortedOnce() {
        let changes = [
            HistoryDetail.FieldChange(fieldID: "c", diff: .init(from: nil, to: .text("3"))),
            HistoryDetail.FieldChange(fieldID: "a", diff: .init(from: nil, to: .text("1"))),
            HistoryDetail.FieldChange(fieldID: "c", diff: .init(from: .text("3"), to: .text("3 again"))),
        ]
        let detail = HistoryDetail(version: nil, state: nil, changes: changes, review: nil)
        #expect(detail.changes.map(\.fieldID) == ["a", "c"])
        #expect(String(decoding: detail.jsonBytes(), as: UTF8.self)
            == #"{"fields":{"a":{"from":null,"to":{"text":"1"}},"c":{"from":null,"to":{"text":"3 again"}}}}"#)
    }

    @Test func settingAFieldKeepsTheOrder() {
        var detail = HistoryDetail(fields: ["b": .init(from: nil, to: .text("2")), "d": .init(from: nil, to: .text("4"))])
        detail.fields["a"] = .init(from: .text("0"), to: .text("1"))
        detail.fields["c"] = .init(from: nil, to: nil)
        detail.fields["d"] = nil
        #expect(detail.changes.map(\.fieldID) == ["a", "b", "c"])
        #expect(String(decoding: detail.jsonBytes(), as: UTF8.self)
            == #"{"fields":{"a":{"from":{"text":"0"},"to":{"text":"1"}},"b":{"from":null,"to":{"text":"2"}},"c":{"from":null,"to":null}}}"#)
        let empty = HistoryDetail()
        #expect(String(decoding: empty.jsonBytes(), as: UTF8.self) == #"{"fields":{}}"#)
    }
}

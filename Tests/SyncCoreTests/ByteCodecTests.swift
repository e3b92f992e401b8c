import Foundation
import FormModel
import PropertyBased
import Testing
@testable import SyncCore

/// A small deterministic generator for building random wire shapes from one seed (the property check
/// reports the seed of a failing case, so it can be replayed).
struct Random: RandomNumberGenerator {
    var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
    mutating func bool() -> Bool { next() & 1 == 1 }

    /// Text with the characters that trip JSON writers: quotes, backslashes, control characters, non-ASCII.
    mutating func text() -> String {
        let pieces = ["a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1B}[2J", "é", "日本", "🙂", "\u{7F}", "\u{2028}", "x y"]
        return (0..<int(0...8)).map { _ in pieces[int(0...(pieces.count - 1))] }.joined()
    }

    mutating func answer() -> AnswerValue {
        switch int(0...12) {
        case 0: return .text(text())
        case 1: return .integer(bool() ? int(-1000...1000) : Int(truncatingIfNeeded: next()))
        case 2: return .decimal(Decimal(int(-100_000...100_000)) / 100)
        case 3: return .boolean(bool())
        case 4: return .date("2026-11-\(int(10...28))")
        case 5: return .time("0\(int(0...9)):\(int(10...59))")
        case 6: return .dateTime("2026-11-23T0\(int(0...9)):15")
        case 7: return .choice(text())
        case 8: return .choices((0..<int(0...3)).map { _ in text() })
        case 9: return .location(Location(latitude: Double(int(-90_000...90_000)) / 1000, longitude: Double(int(-180_000...180_000)) / 997, accuracy: bool() ? Double(int(0...500)) / 10 : nil))
        case 10:
            let digits = Array("0123456789abcdef")
            let hash = String((0..<64).map { _ in digits[int(0...15)] })
            return .attachment(AttachmentReference(sha256: hash, bytes: Int64(int(0...1_000_000_000)), type: bool() ? "image/jpeg" : "application/pdf", name: text()))
        case 11: return .sealed(SealedAnswer(key: "k\(int(0...99))", enc: "ZW5j\(int(0...9))", ct: "Y3Q=\(text())"))
        default: return .raw(text())
        }
    }

    /// No review (a draft), or any state with or without a comment.
    mutating func review() -> RecordReview? {
        guard int(0...3) != 0 else { return nil }
        return RecordReview(state: ReviewState.allCases[int(0...(ReviewState.allCases.count - 1))], comment: bool() ? text() : nil)
    }

    mutating func fields() -> RecordFields {
        let writers = (0..<int(1...3)).map { "device-\($0)-\(text())" }
        let shared = (revision: Int64(int(0...9)), clock: Int64(bitPattern: next() >> 2))
        var states: [String: FieldState] = [:]
        for index in 0..<int(0...12) {
            let own = int(0...3) == 0
            states["f\(index)\(index % 3 == 0 ? text() : "")"] = FieldState(
                value: int(0...6) == 0 ? nil : answer(),
                revision: own ? Int64(int(0...20)) : shared.revision,
                hlc: HybridTimestamp(rawValue: own ? Int64(bitPattern: next() >> 2) : shared.clock),
                clientID: writers[own ? int(0...(writers.count - 1)) : 0])
        }
        return RecordFields(states)
    }

    mutating func mutation() -> Mutation {
        var changes: [String: FieldChange] = [:]
        for index in 0..<int(0...6) {
            changes["field \(index) \(text())"] = FieldChange(value: int(0...5) == 0 ? nil : answer(), baseRevision: Int64(int(0...9)), hlc: HybridTimestamp(rawValue: Int64(bitPattern: next() >> 1)))
        }
        return Mutation(mutationID: text(), recordID: UUID(), form: FormKey(id: "form-\(text())", version: int(1...5)), state: [.draft, .submitted, .deleted][int(0...2)], changes: changes)
    }

    mutating func outcome() -> MutationOutcome {
        let state = { (random: inout Random) in FieldState(value: random.answer(), revision: Int64(random.int(0...9)), hlc: HybridTimestamp(rawValue: Int64(random.int(0...1_000_000))), clientID: random.text()) }
        let conflicts = (0..<int(0...2)).map { _ in
            ConflictEntry(kind: bool() ? .field : .restoredAfterDelete, fieldID: bool() ? text() : nil, policy: [.lastWriterWins, .serverWins, .clientWins, .manual][int(0...3)], winner: bool() ? .server : .client, open: bool(), server: bool() ? state(&self) : nil, client: bool() ? state(&self) : nil)
        }
        let problem = bool() ? nil : ProblemDetails(type: "https://fieldsheet.dev/problems/\(text())", title: text(), status: 422, detail: text(), field: bool() ? text() : nil)
        return MutationOutcome(mutationID: text(), recordID: UUID(), status: [.applied, .merged, .rejected][int(0...2)], revision: bool() ? Int64(int(0...99)) : nil, conflicts: conflicts, problem: problem, changed: [nil, true, false][int(0...2)])
    }
}

@Suite("Byte-level codec: round trips and fixed JSON")
struct ByteCodecTests {
    static let seeds = Gen.uint64(in: 0...UInt64.max)

    @Test func recordFieldsRoundTripThroughTheByteCodec() async throws {
        await propertyCheck(count: 400, input: Self.seeds) { (seed: UInt64) throws in
            var random = Random(seed)
            let fields = random.fields()
            let bytes = fields.jsonBytes()
            let read = try RecordFields(jsonBytes: bytes)
            #expect(read == fields, "seed \(seed)")
            #expect(read.jsonBytes() == bytes, "the canonical bytes are written again alike, seed \(seed)")
        }
    }

    /// Fixed JSON in the layout `Schema/record-fields.schema.json` describes (members in any order, the shared
    /// `stamp`, a field's own entry in `stamps`, a cleared field, writers by index), read and written canonically.
    @Test func recordFieldsReadFixedJSONAsTheContractDescribesIt() throws {
        let json = #"{"stamps":{"notes":{"writer":1,"clock":118179460000000000,"revision":2}},"values":{"site":{"text":"Pump 4"},"count":{"integer":3},"notes":null},"writers":["device-a","device-b"],"stamp":{"revision":4,"clock":118179461395857408,"writer":0}}"#
        let fields = try RecordFields(jsonBytes: Array(json.utf8))
        let shared = HybridTimestamp(rawValue: 118179461395857408)
        #expect(fields == [
            "site": FieldState(value: .text("Pump 4"), revision: 4, hlc: shared, clientID: "device-a"),
            "count": FieldState(value: .integer(3), revision: 4, hlc: shared, clientID: "device-a"),
            "notes": FieldState(value: nil, revision: 2, hlc: HybridTimestamp(rawValue: 118179460000000000), clientID: "device-b"),
        ])
        #expect(String(decoding: fields.jsonBytes(), as: UTF8.self)
            == #"{"values":{"count":{"integer":3},"notes":null,"site":{"text":"Pump 4"}},"writers":["device-a","device-b"],"stamp":{"revision":4,"clock":118179461395857408,"writer":0},"stamps":{"notes":{"revision":2,"clock":118179460000000000,"writer":1}}}"#)
        #expect(throws: JSONReadError.self) {
            try RecordFields(jsonBytes: Array(#"{"values":{"a":null},"writers":["d"],"stamp":{"revision":1,"clock":1,"writer":0},"stamps":{"b":{"revision":1,"clock":1,"writer":0}}}"#.utf8))
        }
    }

    @Test func mutationsAndPushBodiesRoundTrip() async throws {
        await propertyCheck(count: 300, input: Self.seeds) { (seed: UInt64) throws in
            var random = Random(seed)
            let mutations = (0..<random.int(0...4)).map { _ in random.mutation() }
            for mutation in mutations {
                let bytes = mutation.jsonBytes()
                #expect(try Mutation(jsonBytes: bytes) == mutation, "seed \(seed)")
                for (field, change) in mutation.changes {
                    #expect(try FieldChange(jsonBytes: change.jsonBytes()) == change, "seed \(seed) field \(field)")
                }
            }
            let request = PushRequest(clientID: random.text(), clock: random.bool() ? HybridTimestamp(rawValue: 42) : nil, mutations: mutations)
            let body = request.jsonBytes()
            #expect(try PushRequest(jsonBytes: body) == request, "seed \(seed)")
            let read = try ReadPushRequest(jsonBytes: body, maximumMutations: 10)
            #expect(read.mutations == mutations, "seed \(seed)")
            #expect(read.clock == request.clock, "seed \(seed)")
            #expect(read.recordIDsAsSent == mutations.map(\.recordID.lowercased), "seed \(seed)")
            #expect(zip(read.mutations, read.mutationRanges).allSatisfy { $0.digestBytes(sent: body, range: $1).elementsEqual($0.jsonBytes()) }, "seed \(seed)")
        }
    }

    @Test func outcomesAndPushResponsesRoundTrip() async throws {
        await propertyCheck(count: 300, input: Self.seeds) { (seed: UInt64) throws in
            var random = Random(seed)
            let response = PushResponse(outcomes: (0..<random.int(0...3)).map { _ in random.outcome() }, serverClock: HybridTimestamp(rawValue: 7))
            let bytes = response.jsonBytes()
            #expect(try PushResponse(jsonBytes: bytes) == response, "seed \(seed)")
            for outcome in response.outcomes {
                #expect(try MutationOutcome(jsonBytes: outcome.jsonBytes()) == outcome, "seed \(seed)")
                for conflict in outcome.conflicts {
                    #expect(try ConflictEntry(jsonBytes: conflict.jsonBytes()) == conflict, "seed \(seed)")
                    let lost = LostConflict(id: Int64(random.int(1...1_000)), recordID: outcome.recordID, entry: conflict)
                    #expect(try LostConflict(jsonBytes: lost.jsonBytes()) == lost, "seed \(seed)")
                    for state in [conflict.server, conflict.client].compactMap({ $0 }) {
                        #expect(try FieldState(jsonBytes: state.jsonBytes()) == state, "seed \(seed)")
                    }
                }
            }
        }
    }

    @Test func pullPagesAssembledFromStoredBytesDecode() async throws {
        await propertyCheck(count: 200, input: Self.seeds) { (seed: UInt64) throws in
            var random = Random(seed)
            var fields: [RecordFields] = []
            let records = (0..<random.int(0...5)).map { index in
                fields.append(random.fields())
                return RecordEnvelope(
                    recordID: UUID(), form: FormKey(id: random.text(), version: random.int(1...3)), state: .submitted, revision: Int64(index + 1),
                    sequence: Int64(index + 10), author: random.text(), review: random.review(),
                    missingAttachments: index % 2 == 0 ? [] : [String(repeating: "a", count: 64)], fields: fields[index])
            }
            var writer = PullPageWriter()
            for record in records { writer.append(record) }
            let bytes = writer.finish(cursor: 99, hasMore: true, serverClock: HybridTimestamp(rawValue: 5))
            let page = PullPage(changes: records, cursor: 99, hasMore: true, serverClock: HybridTimestamp(rawValue: 5))
            #expect(page.jsonBytes() == bytes, "seed \(seed)")
            #expect(try PullPage(jsonBytes: bytes) == page, "seed \(seed)")
            var read: [RecordFields] = []
            let end = try PullPageReader.read(bytes) { read.append(try $0.fields) }
            #expect(read == fields, "seed \(seed)")
            #expect(end == PullPageEnd(cursor: 99, hasMore: true, serverClock: HybridTimestamp(rawValue: 5), count: records.count))
        }
    }

    /// The canonical layout as it is specified (``RecordFields``: ids sorted, the most common stamp the default
    /// with ties to the first field's, writers in order of first use with the default's first), written the
    /// plain way: the one-pass writer must give these bytes exactly, with or without the ids handed in sorted.
    static func specifiedBytes(_ fields: RecordFields) -> [UInt8] {
        let ids = fields.states.keys.sorted()
        var counts: [(stamp: FieldState, count: Int)] = []
        for id in ids {
            let stamp = fields.states[id]!.stamp
            if let index = counts.firstIndex(where: { $0.stamp == stamp }) { counts[index].count += 1 } else { counts.append((stamp, 1)) }
        }
        let best = counts.reduce(nil as (stamp: FieldState, count: Int)?) { best, entry in entry.count > (best?.count ?? 0) ? entry : best }?.stamp
        var writers: [String] = best.map { [$0.clientID] } ?? []
        for id in ids where !writers.contains(fields.states[id]!.clientID) { writers.append(fields.states[id]!.clientID) }
        var writer = JSONWriter()
        func stamp(_ state: FieldState) {
            writer.beginObject()
            writer.key("revision")
            writer.int(state.revision)
            writer.key("clock")
            writer.int(state.hlc.rawValue)
            writer.key("writer")
            writer.int(writers.firstIndex(of: state.clientID)!)
            writer.endObject()
        }
        writer.beginObject()
        writer.key("values")
        writer.beginObject()
        for id in ids {
            writer.key(id)
            fields.states[id]!.value.write(to: &writer)
        }
        writer.endObject()
        writer.key("writers")
        writer.beginArray()
        for device in writers {
            writer.element()
            writer.string(device)
        }
        writer.endArray()
        if let best {
            writer.key("stamp")
            stamp(best)
        }
        let exceptions = ids.filter { fields.states[$0]!.stamp != best }
        if !exceptions.isEmpty {
            writer.key("stamps")
            writer.beginObject()
            for id in exceptions {
                writer.key(id)
                stamp(fields.states[id]!)
            }
            writer.endObject()
        }
        writer.endObject()
        return writer.bytes
    }

    @Test func recordFieldsWrittenInTheSpecifiedLayout() async throws {
        await propertyCheck(count: 500, input: Self.seeds) { (seed: UInt64) throws in
            var random = Random(seed)
            let fields = random.fields()
            let bytes = fields.jsonBytes()
            #expect(bytes == Self.specifiedBytes(fields), "seed \(seed)")
            #expect(fields.jsonBytes(sortedFieldIDs: fields.states.keys.sorted()) == bytes, "seed \(seed)")
            // Ids that are not the record's (too few) are sorted as usual.
            #expect(fields.jsonBytes(sortedFieldIDs: Array(fields.states.keys.sorted().dropLast())) == bytes, "seed \(seed)")
        }
    }

    @Test func everyFieldItsOwnClockAndTheDefaultWriterNotTheFirst() throws {
        // 250 answers each typed at its own time, by two devices: no two stamps are alike, so every field but
        // one is an exception, written with its writer's index.
        var states: [String: FieldState] = [:]
        for index in 0..<250 {
            let id = "q" + String(1000 + index)
            states[id] = FieldState(
                value: .integer(index), revision: 1, hlc: HybridTimestamp(millis: 1_800_000_000_000 + Int64(index), counter: 0),
                clientID: index % 3 == 0 ? "device-a" : "device-b")
        }
        // Then five fields share one later write of device-b: that stamp is the most common, so device-b is
        // writer 0 although device-a wrote the first field.
        for index in [5, 7, 8, 10, 11] {
            states["q\(1000 + index)"]!.hlc = HybridTimestamp(millis: 1_900_000_000_000, counter: 0)
            states["q\(1000 + index)"]!.revision = 2
        }
        let fields = RecordFields(states)
        let bytes = fields.jsonBytes()
        #expect(bytes == Self.specifiedBytes(fields))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""writers":["device-b","device-a"],"stamp":{"revision":2,"clock":"#))
        #expect(try RecordFields(jsonBytes: bytes) == fields)
    }

    @Test func oneWriterOneStampAndMetadataSaidOnce() throws {
        let clock = HybridTimestamp(millis: 1_800_000_000_000, counter: 0)
        var states: [String: FieldState] = [:]
        var values: [String: AnswerValue] = [:]
        for index in 1...20 {
            values["f\(index)"] = .text("record 12345 field \(index) value")
            states["f\(index)"] = FieldState(value: values["f\(index)"], revision: 1, hlc: clock, clientID: "4b0f7c1e-8d2a-4c55-9a51-1f3e0c9d2b77")
        }
        var fields = RecordFields(states)
        let text = String(decoding: fields.jsonBytes(), as: UTF8.self)
        #expect(!text.contains("\"stamps\""), "one write, one stamp: \(text)")
        #expect(text.components(separatedBy: "4b0f7c1e").count == 2, "the device is named once")
        let valuesAlone = try JSONEncoder().encode(values).count
        #expect(Double(fields.jsonBytes().count) <= 1.15 * Double(valuesAlone))
        // A later edit of one field by another device adds one exception, not a copy of every stamp.
        fields["f3"] = FieldState(value: .text("edited"), revision: 2, hlc: HybridTimestamp(millis: 1_800_000_000_500, counter: 1), clientID: "other")
        let edited = String(decoding: fields.jsonBytes(), as: UTF8.self)
        #expect(edited.contains(#""stamps":{"f3":{"revision":2,"#))
        #expect(try RecordFields(jsonBytes: Array(edited.utf8)) == fields)
    }
}

@Suite("Byte-level reader on hostile input")
struct ByteReaderHostileInputTests {
    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = Array(String(repeating: "[", count: 100_000).utf8)
        var reader = JSONReader(deep)
        #expect(throws: JSONReadError.self) { try reader.skipValue() }
        let body = Array(("{\"clientId\":\"a\",\"mutations\":[" + String(repeating: "{\"x\":", count: 5000)).utf8)
        #expect(throws: JSONReadError.self) { try ReadPushRequest(jsonBytes: body, maximumMutations: 10) }
    }

    @Test func everyTruncationAndByteFlipOfAValidBodyFailsCleanlyOrReads() async throws {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { (seed: UInt64) throws in
            var random = Random(seed)
            let body = PushRequest(clientID: "device", mutations: [random.mutation(), random.mutation()]).jsonBytes()
            for cut in stride(from: 0, to: body.count, by: max(1, body.count / 40)) {
                #expect(throws: JSONReadError.self, "seed \(seed) cut \(cut)") { try ReadPushRequest(jsonBytes: Array(body[..<cut]), maximumMutations: 10) }
            }
            for _ in 0..<40 {
                var flipped = body
                flipped[random.int(0...(body.count - 1))] = UInt8(truncatingIfNeeded: random.next())
                _ = try? ReadPushRequest(jsonBytes: flipped, maximumMutations: 10)
                _ = try? RecordFields(jsonBytes: flipped)
                _ = try? PullPageReader.read(flipped) { _ in }
            }
        }
    }

    @Test func errorsSayWhereAndWhat() throws {
        let body = Array(#"{"clientId":"d","mutations":[{"mutationId":"m","recordId":"not-a-uuid"}]}"#.utf8)
        let error = try #require(throws: JSONReadError.self) { try ReadPushRequest(jsonBytes: body, maximumMutations: 10) }
        #expect(error.path == "mutations[0]")
        #expect(error.message.contains("recordId must be a UUID"))
        let tooMany = Array(#"{"clientId":"d","mutations":[{},{},{}]}"#.utf8)
        let limit = try #require(throws: JSONReadError.self) { try ReadPushRequest(jsonBytes: tooMany, maximumMutations: 0) }
        #expect(limit.message.contains("at most 0"), "the count is refused before the mutations are read")
    }

    @Test func stringsKeepEveryCharacterAndRefuseRawControlBytes() throws {
        var writer = JSONWriter()
        let text = "a\u{0}b\u{1B}]0;title\u{7}\"\\/é🙂\u{2028}"
        writer.string(text)
        var reader = JSONReader(writer.bytes)
        #expect(try reader.readString() == text)
        #expect(!writer.bytes.contains(0x00) && !writer.bytes.contains(0x1B), "control characters are escaped")
        var raw = JSONReader(Array("\"a\u{1}b\"".utf8))
        #expect(throws: JSONReadError.self) { try raw.readString() }
        var surrogate = JSONReader(Array(#""\ud83d\ude42 \u00e9""#.utf8))
        #expect(try surrogate.readString() == "🙂 é")
        var lone = JSONReader(Array(#""\ud83d""#.utf8))
        #expect(throws: JSONReadError.self) { try lone.readString() }
    }
}

import Foundation
import FormModel
import Testing
@testable import SyncCore

@Suite("A mutation's retry digest is taken over the bytes sent when they are canonical")
struct CanonicalMutationTests {
    static let recordID = UUID(uuidString: "0B7E3F7E-5A43-4C39-9D3C-0E8D9C1F6A21")!

    /// A mutation with every answer kind whose writing is byte-stable, clocks and times.
    static func sample(extra: [String: AnswerValue?] = [:]) -> Mutation {
        let hlc = HybridTimestamp(rawValue: 118_179_461_395_857_408)
        var values: [String: AnswerValue?] = [
            "site": .text("Pump 4 / north \"gate\" \\ tab\there\nline é 🐘"),
            "count": .integer(-12),
            "zero": .integer(0),
            "ok": .boolean(true),
            "no": .boolean(false),
            "day": .date("2026-11-28"),
            "at": .time("10:15"),
            "when": .dateTime("2026-11-28T10:15:00Z"),
            "kind": .choice("a"),
            "kinds": .choices(["a", "b/c"]),
            "none": .choices([]),
            "typed": .raw("12,5"),
            "cleared": nil,
            "photo": .attachment(AttachmentReference(sha256: String(repeating: "ab", count: 32), bytes: 1_234, type: "image/jpeg", name: "gate.jpg")),
            "secret": .sealed(SealedAnswer(key: "k-1", enc: "ZW5j", ct: "Y3Q=")),
            "defects/0f0c/@removed": .boolean(false),
            "ctl": .text("bell \u{07} and \u{1F}"),
        ]
        values.merge(extra) { _, new in new }
        return Mutation(
            mutationID: "m-1", recordID: recordID, form: FormKey(id: "site-visit", version: 3), state: .submitted,
            changes: values.mapValues { FieldChange(value: $0, baseRevision: 2, hlc: hlc) },
            times: RecordTimes(created: RecordTimes.date(millis: 1_764_300_000_123), updated: RecordTimes.date(millis: 1_764_300_100_000),
                               submitted: RecordTimes.date(millis: 1_764_300_100_000)))
    }

    /// `mutation` inside a push body, read back: the mutation read and its bytes as they stand in the body.
    static func readInBody(_ mutationBytes: [UInt8]) throws -> (Mutation, [UInt8], Range<Int>) {
        let body = Array(#"{"clientId":"d","mutations":[ "#.utf8) + mutationBytes + Array(" ]}".utf8)
        let push = try ReadPushRequest(jsonBytes: body, maximumMutations: 5)
        let range = try #require(push.mutationRanges.first)
        return (try #require(push.mutations.first), body, range)
    }

    @Test func whatADeviceSendsIsCanonicalAndHashedAsSent() throws {
        let mutation = Self.sample()
        let (read, body, range) = try Self.readInBody(mutation.jsonBytes())
        #expect(read == mutation)
        #expect(Array(body[range]) == mutation.jsonBytes(), "the range is the mutation's bytes, without the whitespace around it")
        #expect(Mutation.isCanonical(body[range]))
        #expect(Array(read.digestBytes(sent: body, range: range)) == mutation.jsonBytes())
    }

    @Test func timesAreOptionalInTheCanonicalForm() throws {
        var mutation = Self.sample()
        mutation.times = RecordTimes()
        #expect(Mutation.isCanonical(mutation.jsonBytes()[...]))
        mutation.times = RecordTimes(updated: RecordTimes.date(millis: 5))
        #expect(Mutation.isCanonical(mutation.jsonBytes()[...]))
        mutation.changes = [:]
        #expect(Mutation.isCanonical(mutation.jsonBytes()[...]))
    }

    @Test(arguments: [
        ("a decimal, whose text is normalised", AnswerValue.decimal(Decimal(string: "12.5")!)),
        ("a location, whose numbers are re-formatted", AnswerValue.location(Location(latitude: 51.5, longitude: -0.12, accuracy: 4))),
    ])
    func answersWhoseWritingIsNotByteStableAreWrittenAgain(what: String, value: AnswerValue) throws {
        let mutation = Self.sample(extra: ["odd": value])
        let (read, body, range) = try Self.readInBody(mutation.jsonBytes())
        #expect(!Mutation.isCanonical(body[range]), "\(what)")
        #expect(Array(read.digestBytes(sent: body, range: range)) == read.jsonBytes())
    }

    /// Each is the device's bytes changed in a way the reader still takes, but that writing the mutation again
    /// does not give back.
    static let variants: [(String, @Sendable (String) -> String)] = [
        ("the record id in uppercase", { $0.replacingOccurrences(of: recordID.lowercased, with: recordID.uuidString) }),
        ("a space after a colon", { $0.replacingOccurrences(of: #""formId":"#, with: #""formId": "#) }),
        ("keys out of order", { $0.replacingOccurrences(of: #""formId":"site-visit","formVersion":3"#, with: #""formVersion":3,"formId":"site-visit""#) }),
        ("an escaped slash", { $0.replacingOccurrences(of: "Pump 4 /", with: #"Pump 4 \/"#) }),
        ("a letter as a \\u escape", { $0.replacingOccurrences(of: "Pump", with: #"\u0050ump"#) }),
        ("an uppercase \\u escape", { $0.replacingOccurrences(of: #"\u001f"#, with: #"\u001F"#) }),
        ("an unknown member", { $0.replacingOccurrences(of: #""state":"submitted""#, with: #""state":"submitted","sticker":1"#) }),
        ("a change without its value", { $0.replacingOccurrences(of: #","value":null"#, with: "") }),
        ("a time as null", { $0.replacingOccurrences(of: #""createdAt":1764300000123"#, with: #""createdAt":null"#) }),
        ("a negative zero", { $0.replacingOccurrences(of: #"{"integer":0}"#, with: #"{"integer":-0}"#) }),
        ("an attachment with an extra member", { $0.replacingOccurrences(of: #""type":"image/jpeg"}"#, with: #""type":"image/jpeg","width":3}"#) }),
        ("a duplicate field", { $0.replacingOccurrences(of: #"{"changes":{"#, with: #"{"changes":{"at":{"baseRevision":1,"hlc":1,"value":null},"#) }),
    ]

    @Test(arguments: variants.indices)
    func bytesNotInTheCanonicalFormAreWrittenAgainForTheDigest(index: Int) throws {
        let (what, change) = Self.variants[index]
        let canonical = String(decoding: Self.sample().jsonBytes(), as: UTF8.self)
        let changed = change(canonical)
        #expect(changed != canonical, "the variant \(what) changes the bytes")
        let (read, body, range) = try Self.readInBody(Array(changed.utf8))
        #expect(!Mutation.isCanonical(body[range]), "\(what)")
        #expect(Array(read.digestBytes(sent: body, range: range)) == read.jsonBytes(), "\(what)")
    }

    /// The property the server relies on: bytes are taken as canonical only when they are exactly what the
    /// mutation read from them writes. Checked over many random corruptions of canonical bytes (a byte changed,
    /// removed or doubled), the way the libFuzzer target (Tests/Fuzz/sync) checks arbitrary input.
    @Test func bytesTakenAsCanonicalAreAlwaysWhatTheMutationWrites() throws {
        var random = SystemRandomNumberGenerator()
        let canonical = Self.sample().jsonBytes()
        let alphabet = Array(#"{}[]:,"\/ 0123456789-abcdefnrtuABCDEF.eE"#.utf8) + [0x09, 0x0A, 0xC3, 0xA9]
        var read = 0
        var taken = 0
        for _ in 0..<20_000 {
            var bytes = canonical
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = alphabet.randomElement(using: &random)!
                case 1: bytes.remove(at: at)
                default: bytes.insert(bytes[at], at: at)
                }
            }
            var reader = JSONReader(bytes)
            guard let mutation = try? Mutation.read(from: &reader), (try? reader.finish()) != nil else { continue }
            read += 1
            if Mutation.isCanonical(bytes[...]) {
                taken += 1
                #expect(bytes == mutation.jsonBytes(), "taken as canonical: \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(read > 100, "enough corrupted mutations still read to say something")
        #expect(taken > 0, "some corruptions are still canonical (a changed letter in a text)")
    }

    @Test func notAMutationAtAllIsNotCanonical() {
        for text in ["", "{", "{}", "[]", "null", #"{"changes":{}}"#, #"{"changes":{"a":{"baseRevision":1,"hlc":1,"value":{"text":"x"}}"#] {
            #expect(!Mutation.isCanonical(Array(text.utf8)[...]), "\(text)")
        }
    }
}

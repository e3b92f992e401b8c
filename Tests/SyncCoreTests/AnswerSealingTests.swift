import Foundation
import FormModel
import SyncCore
import Testing

/// Sealing a sensitive answer to a project key and opening it with the private key: the answer comes back
/// whole, bound to its record, field and key; the sealed form reads and writes like any answer.
struct AnswerSealingTests {
    static let record = "7c1e6f52-4d3a-4a8e-9d0b-1a2b3c4d5e6f"

    @Test(arguments: [
        AnswerValue.text("HIV positive, since 2019"), .integer(48_213), .decimal(Decimal(string: "12.75")!), .boolean(true),
        .choices(["a", "b"]), .location(Location(latitude: 52.52, longitude: 13.4, accuracy: 5)), .raw("12,5 kg"),
    ])
    func anAnswerOpensToItselfWithTheKeyAndOnlyThere(answer: AnswerValue) throws {
        let key = ProjectPrivateKey(newWithID: "k1")
        let sealed = try AnswerSealing.seal(answer, to: key.publicKey, record: Self.record, path: "household/9f/income")
        #expect(sealed.key == "k1")
        #expect(Data(base64Encoded: sealed.enc)?.count == 32)
        #expect(try AnswerSealing.open(sealed, with: key, record: Self.record.uppercased(), path: "household/9f/income") == answer)
        // Another field, another record, another key, or a changed byte: it does not open.
        #expect(throws: SealingError.self) { try AnswerSealing.open(sealed, with: key, record: Self.record, path: "household/9f/other") }
        #expect(throws: SealingError.self) { try AnswerSealing.open(sealed, with: key, record: UUID().uuidString, path: "household/9f/income") }
        #expect(throws: SealingError.self) { try AnswerSealing.open(sealed, with: ProjectPrivateKey(newWithID: "k1"), record: Self.record, path: "household/9f/income") }
        var changed = Data(base64Encoded: sealed.ct) ?? Data()
        changed[0] ^= 1
        let tampered = SealedAnswer(key: sealed.key, enc: sealed.enc, ct: changed.base64EncodedString())
        #expect(throws: SealingError.self) { try AnswerSealing.open(tampered, with: key, record: Self.record, path: "household/9f/income") }
        // Two seals of one answer differ (a fresh encapsulated key each time).
        #expect(try AnswerSealing.seal(answer, to: key.publicKey, record: Self.record, path: "household/9f/income") != sealed)
    }

    @Test func theSealedFormReadsAndWritesLikeAnyAnswerAndAKeyFileRoundTrips() throws {
        let key = ProjectPrivateKey(newWithID: "a1b2c3")
        let sealed = AnswerValue.sealed(try AnswerSealing.seal(.text("x"), to: key.publicKey, record: Self.record, path: "a"))
        var writer = JSONWriter()
        sealed.write(to: &writer)
        var reader = JSONReader(writer.bytes)
        #expect(try AnswerValue.read(from: &reader) == sealed)
        #expect(try JSONDecoder().decode(AnswerValue.self, from: Data(writer.bytes)) == sealed)
        var bad = JSONReader(Array(#"{"sealed": {"key": "k 1", "enc": "a", "ct": "b"}}"#.utf8))
        #expect(throws: JSONReadError.self) { try AnswerValue.read(from: &bad) }
        let file = key.fileText(project: "field")
        let read = try ProjectPrivateKey(fileBytes: Array(file.utf8), file: "field.key")
        #expect(read.id == key.id && read.publicKey == key.publicKey)
        #expect(throws: SealingError.self) { try ProjectPrivateKey(fileBytes: Array("{}".utf8), file: "empty.key") }
    }
}

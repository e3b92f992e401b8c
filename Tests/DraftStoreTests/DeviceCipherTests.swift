import FieldSheetTesting
import Foundation
import FormModel
import Testing
@testable import DraftStore

/// The cipher's byte-level pieces: base64 decoded from bytes into a kept buffer, and a record's answers sealed
/// and opened in place, each bound to its place.
struct DeviceCipherTests {
    private func decode(_ text: String, into output: inout [UInt8]) -> Bool {
        var text = text
        return text.withUTF8 { Base64Bytes.decode($0, into: &output) }
    }

    @Test func base64DecodesWhatFoundationEncodesIntoOneKeptBuffer() {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("DeviceCipherTests base64 round trip: seed \(seed)")
        var random = SplitMix64(seed: seed)
        var output: [UInt8] = []
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...96, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let text = Data(bytes).base64EncodedString()
            #expect(decode(text, into: &output), "seed \(seed): \(text)")
            #expect(output == bytes, "seed \(seed): \(text)")
        }
    }

    @Test(arguments: [
        "QUJ", "Q", "QUJDRA=", // not a multiple of 4
        "QU JD", "QUJD\n", " QUJD", // white space
        "QUJ-", "QUJ_", "Q\u{e9}J", // outside the alphabet (URL-safe, non-ASCII)
        "=UJD", "QUJD=A==", // padding out of place
    ])
    func base64RefusesWhatFoundationRefuses(text: String) {
        #expect(Data(base64Encoded: text) == nil)
        var output: [UInt8] = [1, 2, 3]
        #expect(!decode(text, into: &output))
        #expect(output.isEmpty)
    }

    /// Padding inside the last group, a group of padding alone, or an `=` after a full group, which
    /// Foundation's reader lets through on Linux, is refused too: a sealed answer is always canonical base64.
    @Test(arguments: ["Q===", "====", "QU=D", "QQ=A", "QUJD="])
    func base64RefusesPaddingOutOfPlace(text: String) {
        var output: [UInt8] = [1, 2, 3]
        #expect(!decode(text, into: &output))
        #expect(output.isEmpty)
    }

    @Test func base64ReadsTheEmptyTextAndBothPaddings() {
        var output: [UInt8] = [9]
        #expect(decode("", into: &output) && output.isEmpty)
        #expect(decode("QQ==", into: &output) && output == Array("A".utf8))
        #expect(decode("QUI=", into: &output) && output == Array("AB".utf8))
        #expect(decode("QUJD", into: &output) && output == Array("ABC".utf8))
    }

    /// A record's answers sealed one by one open back to the same JSON; one moved to another field or record,
    /// altered by a byte of its text, or put there in clear is refused with the device-key error.
    @Test func recordAnswersOpenInPlaceAndRefuseAMovedAlteredOrClearOne() throws {
        let cipher = DeviceCipher(try DeviceDataKey(bytes: [UInt8](repeating: 7, count: DeviceDataKey.byteCount)))
        let parts = ["record", "0f6c2d3e-0000-4000-8000-000000000001"]
        let clear = #"{"values":{"site":{"text":"Pump 4 \"north\" é"},"count":{"integer":2},"gone":null},"writers":["a"]}"#
        let sealed = try cipher.sealFields(Array(clear.utf8), parts: parts)
        #expect(String(decoding: sealed, as: UTF8.self).contains("Pump") == false)
        #expect(try cipher.openFields(sealed, parts: parts, acceptsPlaintext: false) == Array(clear.utf8))
        // Sealing twice changes nothing; a sealed answer whose string has an escape (valid JSON) opens too.
        #expect(try cipher.sealFields(sealed, parts: parts) == sealed)
        let text = String(decoding: sealed, as: UTF8.self)
        let start = try #require(text.range(of: #""site":""#)).upperBound
        let first = try #require(text[start].asciiValue)
        let escaped = text.replacingCharacters(in: start...start, with: String(format: "\\u%04x", Int(first)))
        #expect(escaped != text)
        #expect(try cipher.openFields(Array(escaped.utf8), parts: parts, acceptsPlaintext: false) == Array(clear.utf8))

        /// The message of the cipher's `databaseDamaged` error opening `fields` throws; nil when it opens.
        func refusal(_ fields: [UInt8], parts: [String] = parts) -> String? {
            do {
                _ = try cipher.openFields(fields, parts: parts, acceptsPlaintext: false)
                return nil
            } catch {
                let found = DeviceCipher.storeError(in: "\(error)")
                #expect(found?.code == .databaseDamaged, "\(error)")
                return found?.message ?? "\(error)"
            }
        }
        let another = try #require(refusal(sealed, parts: ["record", "0f6c2d3e-0000-4000-8000-000000000002"]))
        #expect(another.contains("altered or moved"), "\(another)")
        let swapped = text.replacingOccurrences(of: #""site":"#, with: #""tmp":"#).replacingOccurrences(of: #""count":"#, with: #""site":"#)
            .replacingOccurrences(of: #""tmp":"#, with: #""count":"#)
        #expect(try #require(refusal(Array(swapped.utf8))).contains("altered or moved"))
        // One character of the first sealed answer changed (still base64), and one made not base64.
        for replacement in ["A", "B", "*"] {
            var altered = text
            let index = altered.index(start, offsetBy: 10)
            altered.replaceSubrange(index...index, with: altered[index] == Character(replacement) ? "C" : replacement)
            #expect(try #require(refusal(Array(altered.utf8))).contains("altered or moved"))
        }
        let planted = text.replacingOccurrences(of: #""gone":null"#, with: #""gone":{"text":"planted"}"#)
        #expect(try #require(refusal(Array(planted.utf8))).contains("in clear"))
        #expect(try cipher.openFields(Array(planted.utf8), parts: parts, acceptsPlaintext: true).count > clear.utf8.count)
    }
}

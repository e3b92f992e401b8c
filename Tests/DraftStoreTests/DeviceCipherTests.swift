#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif
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

    /// The encoder writes what Foundation writes (padded, standard alphabet), after what the buffer held.
    @Test func base64EncodesAsFoundationDoes() {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("DeviceCipherTests base64 encoding: seed \(seed)")
        var random = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...96, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            var output = Array("\"".utf8)
            Base64Bytes.encode(bytes, into: &output)
            #expect(output == Array(("\"" + Data(bytes).base64EncodedString()).utf8), "seed \(seed): \(bytes)")
        }
    }

    /// Nonces come 21 to a read of the system's generator: a record of many answers takes several reads, and no two
    /// answers (nor two records) share one; each sealed answer carries the nonce it was sealed with.
    @Test func everySealedAnswerHasANonceOfItsOwn() throws {
        let cipher = DeviceCipher(try DeviceDataKey(bytes: [UInt8](repeating: 7, count: DeviceDataKey.byteCount)))
        let parts = ["record", "0f6c2d3e-0000-4000-8000-000000000001"]
        let clear = "{\"values\":{" + (1...50).map { "\"f\($0)\":{\"text\":\"same\"}" }.joined(separator: ",") + "},\"writers\":[]}"
        var nonces: Set<[UInt8]> = []
        for _ in 0..<3 {
            let sealed = try cipher.sealFields(Array(clear.utf8), parts: parts)
            #expect(try cipher.openFields(sealed, parts: parts, acceptsPlaintext: false) == Array(clear.utf8))
            var raws: [ArraySlice<UInt8>] = []
            _ = try DeviceCipher.rewriteValues(sealed) { _, raw, writer in
                raws.append(raw)
                writer.raw(raw)
            }
            #expect(raws.count == 50)
            for raw in raws {
                let bytes = try #require(Data(base64Encoded: String(decoding: raw.dropFirst().dropLast(), as: UTF8.self)))
                nonces.insert(Array(bytes[1..<13]))
            }
        }
        #expect(nonces.count == 150)
        var supply = DeviceCipher.nonces(count: 30)
        let taken = (0..<30).map { _ in Array(supply.next()) }
        #expect(Set(taken).count == 30 && taken.allSatisfy { $0.count == 12 })
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

    /// The cipher's values are ChaChaPoly's combined layout after the version byte, whichever way they are made:
    /// values sealed by swift-crypto's (CryptoKit's) `ChaChaPoly` open through the cipher (on Linux, its kept
    /// BoringSSL contexts), and the cipher's own values open through `ChaChaPoly`, for random sizes and places.
    @Test func valuesSealedByChaChaPolyOpenThroughTheCipherAndTheOtherWay() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("DeviceCipherTests ChaChaPoly both ways: seed \(seed)")
        var random = SplitMix64(seed: seed)
        let keyBytes = (0..<DeviceDataKey.byteCount).map { _ in UInt8.random(in: 0...255, using: &random) }
        let cipher = DeviceCipher(try DeviceDataKey(bytes: keyBytes))
        let key = SymmetricKey(data: keyBytes)
        for _ in 0..<500 {
            let plaintext = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let place = (0..<Int.random(in: 0...80, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            // ChaChaPoly -> the cipher, from an array, a Data, and bytes in a larger buffer.
            let sealed = [DeviceCipher.version] + Array(try ChaChaPoly.seal(plaintext, using: key, authenticating: place).combined)
            #expect(cipher.open(sealed, place: place) == plaintext, "seed \(seed)")
            #expect(cipher.openData(Data(sealed), place: place).map(Array.init) == plaintext, "seed \(seed)")
            let padded = [0xAA] + sealed + [0xBB]
            #expect(cipher.openData(padded[1..<(padded.count - 1)], place: place).map(Array.init) == plaintext, "seed \(seed)")
            // The cipher -> ChaChaPoly, both ways of sealing.
            for mine in [try cipher.seal(plaintext, place: place), Array(try cipher.sealData(plaintext, place: place))] {
                #expect(mine.count == plaintext.count + DeviceCipher.overhead && mine.first == DeviceCipher.version, "seed \(seed)")
                let opened = try ChaChaPoly.open(try ChaChaPoly.SealedBox(combined: mine.dropFirst()), using: key, authenticating: place)
                #expect(Array(opened) == plaintext, "seed \(seed)")
                #expect(cipher.open(mine, place: place) == plaintext, "seed \(seed)")
            }
        }
    }

    /// A value with any byte of its version, nonce, ciphertext or tag changed, cut short, or opened at another
    /// place (a byte changed, added or removed) or with another key is refused (nil), never opened.
    @Test func aTamperedValueOrAnotherPlaceOrKeyIsRefused() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("DeviceCipherTests tampering: seed \(seed)")
        var random = SplitMix64(seed: seed)
        let cipher = DeviceCipher(try DeviceDataKey(bytes: (0..<DeviceDataKey.byteCount).map { _ in UInt8.random(in: 0...255, using: &random) }))
        let other = DeviceCipher(try DeviceDataKey(bytes: (0..<DeviceDataKey.byteCount).map { _ in UInt8.random(in: 0...255, using: &random) }))
        let place = DeviceCipher.place(["edit", "0f6c2d3e-0000-4000-8000-000000000001", "site"])
        let plaintext = Array(#"{"text":"Pump 4"}"#.utf8)
        let sealed = try cipher.seal(plaintext, place: place)
        #expect(cipher.open(sealed, place: place) == plaintext)
        // Every byte: version (0), nonce (1..<13), ciphertext, tag (the last 16).
        for index in sealed.indices {
            var altered = sealed
            altered[index] ^= UInt8.random(in: 1...255, using: &random)
            #expect(cipher.open(altered, place: place) == nil, "seed \(seed): byte \(index)")
            #expect(cipher.openData(Data(altered), place: place) == nil, "seed \(seed): byte \(index)")
        }
        for count in [0, 1, 13, DeviceCipher.overhead - 1, sealed.count - 1] {
            #expect(cipher.open(Array(sealed.prefix(count)), place: place) == nil, "cut to \(count)")
        }
        #expect(cipher.open(sealed + [0], place: place) == nil)
        var moved = place
        moved[Int.random(in: moved.indices, using: &random)] ^= 1
        #expect(cipher.open(sealed, place: moved) == nil, "seed \(seed)")
        #expect(cipher.open(sealed, place: place + [0]) == nil)
        #expect(cipher.open(sealed, place: Array(place.dropLast())) == nil)
        #expect(cipher.open(sealed, place: DeviceCipher.place(["edit", "0f6c2d3e-0000-4000-8000-000000000001", "other"])) == nil)
        #expect(other.open(sealed, place: place) == nil)
        // Still opens after the refusals: a refused value leaves the cipher's kept state as it was.
        #expect(cipher.open(sealed, place: place) == plaintext)
    }

    /// One cipher sealing and opening from many tasks at once: each value opens to its own plaintext (on Linux
    /// the key's contexts are handed out one caller at a time).
    @Test func oneCipherSealsAndOpensFromManyTasksAtOnce() async throws {
        let cipher = DeviceCipher(try DeviceDataKey(bytes: [UInt8](repeating: 3, count: DeviceDataKey.byteCount)))
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for index in 0..<2_000 {
                        let place = DeviceCipher.place(["edit", "\(task)", "f\(index)"])
                        let plaintext = Array("task \(task) value \(index)".utf8)
                        let sealed = try cipher.sealData(plaintext, place: place)
                        if cipher.openData(sealed, place: place).map(Array.init) != plaintext { wrong += 1 }
                        if cipher.openData(sealed, place: DeviceCipher.place(["edit", "\(task)", "g\(index)"])) != nil { wrong += 1 }
                    }
                    return wrong
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}

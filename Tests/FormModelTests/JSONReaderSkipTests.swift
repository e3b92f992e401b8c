import Foundation
import FormModel
import Testing

/// `JSONReader.skipValue()` checks what reading the value would check, byte by byte, without building it.
struct JSONReaderSkipTests {
    /// Skips the value at the start of `json` and returns its text, or the failure.
    static func skip(_ json: String, maximumDepth: Int = 64) -> Result<String, JSONReadError> {
        var reader = JSONReader(Array(json.utf8), maximumDepth: maximumDepth)
        do {
            let range = try reader.skipValue()
            return .success(String(decoding: Array(json.utf8)[range], as: UTF8.self))
        } catch let error as JSONReadError {
            return .failure(error)
        } catch {
            Issue.record("unexpected \(error)")
            return .failure(JSONReadError(offset: -1, message: "\(error)"))
        }
    }

    /// `readString()` makes ASCII strings on its own path and every other one through UTF-8 validation: both give
    /// the text, and invalid UTF-8 is refused after an ASCII start as at the start.
    @Test func readsASCIIAndOtherStringsAlikeAndRefusesInvalidUTF8() throws {
        for text in ["", "plain", "site_12/a", "é", "abc é€😀", "😀"] {
            var reader = JSONReader(Array("\"\(text)\"".utf8))
            #expect(try reader.readString() == text)
        }
        for bytes: [UInt8] in [[0x22, 0x61, 0x62, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0x61, 0xED, 0xA0, 0x80, 0x22]] {
            var reader = JSONReader(bytes)
            #expect(throws: JSONReadError.self) { try reader.readString() }
        }
    }

    @Test func skipsNestedValuesAndLeavesTheReaderAfterThem() throws {
        let json = #"{"a": {"b": [1, -2.5e3, [], {}, [[{"c": null}]], true, false, "x"]}, "d": 7}"#
        var reader = JSONReader(Array(json.utf8))
        try reader.beginObject()
        #expect(try reader.nextKey() == "a")
        let range = try reader.skipValue()
        #expect(String(decoding: Array(json.utf8)[range], as: UTF8.self) == #"{"b": [1, -2.5e3, [], {}, [[{"c": null}]], true, false, "x"]}"#)
        #expect(try reader.nextKey() == "d")
        #expect(try reader.readInt64() == 7)
        #expect(try reader.nextKey() == nil)
        try reader.finish()
    }

    @Test(arguments: [
        #""plain""#, #""say \"hi\" \\ \/ \b\f\n\r\t""#, #""\u00e9t\u00C9""#, #""\ud83d\ude00 and 😀""#, #""é€😀 multibyte""#,
        #"{"k\"ey\u0041": ["\\", "\u0000"]}"#, #""""#, #"[]"#, #"{}"#, "  [ 1 , { \"a\" : [ ] } ]  ",
    ])
    func skipsStringsWithEveryEscape(json: String) throws {
        #expect(try Self.skip(json).get() == json.trimmingCharacters(in: .whitespaces))
    }

    @Test(arguments: [
        (#""open"#, "The string is not closed"),
        (#""bad \x escape""#, "Unknown escape"),
        (#""\u12G4""#, "Expected four hex digits"),
        (#""\udc00""#, "A low surrogate without a high one"),
        (#""\ud800 alone""#, "A high surrogate must be followed by a low surrogate"),
        (#""\ud800\u0041""#, "A high surrogate must be followed by a low surrogate"),
        ("\"tab\there\"", "A control character must be escaped"),
        (#"[1 2]"#, "Expected ',' or ']', found '2'"),
        (#"[1,]"#, "Expected a value, found ']'"),
        (#"{"a" 1}"#, "Expected ':' after a key"),
        (#"{"a": 1,}"#, "Expected a quoted key, found '}'"),
        (#"{a: 1}"#, "Expected a quoted key, found 'a'"),
        (#"{"a": 1"#, "Expected ',' or '}', found the end of the input"),
        (#"[[["#, "Expected a value or ']', found the end of the input"),
        (#"01"#, "A number must not start with 0"),
        (#"1."#, "Expected digits after the decimal point"),
        (#"-"#, "Expected a number"),
        (#"1e+"#, "Expected digits in the exponent"),
        (#"tru"#, "Expected true"),
        (#"nul"#, "Expected null"),
        (#""#, "Expected a value, found the end of the input"),
        (#"}"#, "Expected a value, found '}'"),
    ])
    func refusesBadInputWithAClearError(json: String, message: String) {
        guard case .failure(let error) = Self.skip(json) else {
            Issue.record("\(json) was skipped")
            return
        }
        #expect(error.message.contains(message), "\(json): \(error)")
    }

    @Test func refusesInvalidUTF8InAStringOrAKey() {
        for bytes: [UInt8] in [[0x22, 0xC3, 0x22], [0x22, 0x61, 0x5C, 0x6E, 0xFF, 0x22], [0x7B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x3A, 0x31, 0x7D]] {
            var reader = JSONReader(bytes)
            #expect(throws: JSONReadError.self) { try reader.skipValue() }
        }
    }

    @Test func refusesNestingDeeperThanTheLimitWhereReadingWould() throws {
        let deep = String(repeating: "[", count: 5) + String(repeating: "]", count: 5)
        #expect(try Self.skip(deep, maximumDepth: 5).get() == deep)
        guard case .failure(let error) = Self.skip("[" + deep + "]", maximumDepth: 5) else {
            Issue.record("six levels skipped under a limit of five")
            return
        }
        #expect(error.isTooDeep)
        #expect(error.offset == 5)
        // Inside containers already open, the skip counts their levels too.
        var reader = JSONReader(Array("[[[[1]]]]".utf8), maximumDepth: 3)
        try reader.beginArray()
        #expect(try reader.nextElement())
        try reader.beginArray()
        #expect(try reader.nextElement())
        #expect(throws: JSONReadError.self) { try reader.skipValue() }
    }

    /// Mutated documents (bytes replaced, dropped, doubled): the skip refuses exactly what reading the document
    /// refuses, apart from what only the tree builder refuses (duplicate keys, numbers out of range).
    @Test func agreesWithTheParserOnMutatedDocuments() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("JSONReaderSkipTests seed: \(seed)")
        var random = SplitMix64(seed: seed)
        let base = Array(#"{"a": [1, -2.5e-3, true, false, null, "x\"\\\u00e9\ud83d\ude00é"], "b": {"c": {}, "d": []}, "e": "\/"}"#.utf8)
        let alphabet = Array(#"{}[],:"\ u0dD8e.-+9tfn"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
        for _ in 0..<3_000 {
            var bytes = base
            for _ in 0..<Int(random.next() % 3 + 1) {
                let at = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 3 {
                case 0: bytes[at] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: at)
                default: bytes.insert(bytes[at], at: at)
                }
                if bytes.isEmpty { bytes = base }
            }
            var reader = JSONReader(bytes)
            let skipped = (try? reader.skipValue()) != nil && (try? reader.finish()) != nil
            let parsed: Bool
            do {
                _ = try JSONParser().parse(Data(bytes))
                parsed = true
            } catch {
                // Refused by the tree builder alone: the skip need not refuse it.
                let treeOnly = error.message.hasPrefix("Duplicate key") || error.message.contains("out of range")
                parsed = treeOnly && skipped
            }
            #expect(skipped == parsed, "seed \(seed): \(String(decoding: bytes, as: UTF8.self))")
        }
    }
}

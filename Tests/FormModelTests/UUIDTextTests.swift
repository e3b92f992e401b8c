import Foundation
import FormModel
import Testing

/// A UUID's text as FieldSheet stores and sends it: ``UUID/lowercased`` writes what Foundation writes in lowercase,
/// ``UUID/init(text:)`` reads it back and reads what Foundation reads for the 36-character form, either case, and
/// refuses every other text.
struct UUIDTextTests {
    @Test func randomUUIDsRoundTripAsFoundationWritesThem() {
        let seed = UInt64(Date().timeIntervalSince1970 * 1000)
        print("UUIDTextTests seed \(seed)")
        var random = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &bytes) { raw in
                for index in raw.indices { raw[index] = UInt8(truncatingIfNeeded: random.next()) }
            }
            let id = UUID(uuid: bytes)
            #expect(id.lowercased == id.uuidString.lowercased(), "seed \(seed)")
            #expect(UUID(text: id.lowercased) == id, "seed \(seed)")
            #expect(UUID(text: id.uuidString) == id, "seed \(seed): upper case")
            #expect(UUID(text: id.uuidString) == UUID(uuidString: id.uuidString), "seed \(seed)")
        }
    }

    @Test(arguments: [
        "", "0b7e3f7e-5a43-4c39-9d3c-0e8d9c1f6a2", "0b7e3f7e-5a43-4c39-9d3c-0e8d9c1f6a211",  // too short, too long
        "0b7e3f7e5a43-4c39-9d3c-0e8d9c1f6a21-", "0b7e3f7e-5a434-c39-9d3c-0e8d9c1f6a21",  // hyphens out of place
        "0b7e3f7g-5a43-4c39-9d3c-0e8d9c1f6a21", "0b7e3f7e-5a43-4c39-9d3c-0e8d9c1f6a2 ",  // not hex
        "{0b7e3f7e-5a43-4c39-9d3c-0e8d9c1f6a}", "+b7e3f7e-5a43-4c39-9d3c-0e8d9c1f6a21", " b7e3f7e-5a43-4c39-9d3c-0e8d9c1f6a21",
        "0b7e3f7e-5a43-4c39-9d3c-0e8d9c1f6aé",  // 36 bytes, not 36 characters of the form
    ])
    func everyOtherTextIsRefused(text: String) {
        #expect(UUID(text: text) == nil)
    }

    @Test func aKnownIDReadsAndWrites() throws {
        let id = try #require(UUID(text: "0B7E3F7E-5a43-4C39-9d3c-0E8D9C1F6A21"))
        #expect(id.lowercased == "0b7e3f7e-5a43-4c39-9d3c-0e8d9c1f6a21")
        #expect(id == UUID(uuidString: "0b7e3f7e-5a43-4c39-9d3c-0e8d9c1f6a21"))
    }
}

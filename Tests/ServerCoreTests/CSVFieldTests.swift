import FieldSheetTesting
import Foundation
import Testing
@testable import ServerCore

/// The CSV cell writer's fast path (copy the cell when no byte needs work) gives what the full quoting gives.
struct CSVFieldTests {
    static let alphabet: [String] = [
        "a", "Z", "0", "7", " ", ",", "\"", "'", "=", "+", "-", "@", "\t", "\r", "\n", "\r\n", "\u{1B}", "\u{7F}", "\u{9B}",
        "\u{85}", "é", "ß", "\u{202E}", "\u{2066}", "“", "—", "€", "😀", ".", "e",
    ]

    @Test func theFastPathAgreesWithTheFullQuoting() {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("CSVFieldTests seed \(seed)")
        var generator = SplitMix64(seed: seed)
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...8, using: &generator)
            let text = (0..<length).map { _ in Self.alphabet.randomElement(using: &generator)! }.joined()
            #expect(RecordExporter.csvField(text) == RecordExporter.quotedCSVField(text), "\(text.debugDescription) (seed \(seed))")
        }
    }

    @Test(arguments: ["plain text", "Ünïcödé 😀", "", "12.5", "a-b", "x=y"])
    func cellsThatNeedNothingAreCopied(text: String) {
        #expect(!RecordExporter.needsCSVWork(text))
        #expect(RecordExporter.csvField(text) == text)
    }

    @Test(arguments: ["a,b", "say \"hi\"", "line\nbreak", "=SUM(A1)", "-3", "+1", "@x", "\u{1B}[2J", "\u{202E}abc", "\u{9B}"])
    func cellsThatNeedWorkAreSeen(text: String) {
        #expect(RecordExporter.needsCSVWork(text))
    }
}

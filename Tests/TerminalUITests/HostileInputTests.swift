import FormModel
import Testing
@testable import TerminalUI

/// Text written by other people and bytes from the terminal that try to break out: nothing reaches the
/// terminal as a control sequence, and decoding any bytes takes bounded work and memory.
struct HostileInputTests {
    static let sequences: [(name: String, text: String)] = [
        ("OSC 0 window title", "\u{1B}]0;pwned\u{07}"),
        ("OSC 52 clipboard", "\u{1B}]52;c;cm0gLXJmIH4=\u{07}"),
        ("CSI 2J clear screen", "\u{1B}[2J\u{1B}[H"),
        ("C1 CSI", "\u{9B}2J"),
        ("bidi override", "abc\u{202E}fed"),
    ]

    @Test(arguments: sequences.map(\.text))
    func textWrittenIntoTheScreenShowsControlsAsSymbols(text: String) {
        var screen = Screen(size: TerminalSize(columns: 40, rows: 2))
        screen.write("Site: " + text, column: 0, row: 0)
        screen[0, 1] = Cell("\u{1B}")  // even a cell set directly
        for output in [screen.ansiText(), screen.plainText()] {
            let controls = output.unicodeScalars.filter { TerminalText.isControl($0) && $0 != "\n" }
            // The only ESCs left are the screen's own SGR sequences (ESC [ … m).
            #expect(!output.contains("\u{07}") && !output.contains("\u{9B}") && !output.contains("\u{202E}"))
            #expect(!output.contains("\u{1B}]") && !output.contains("\u{1B}[2J"))
            #expect(controls.allSatisfy { $0 == "\u{1B}" })
        }
        #expect(screen.plainText().contains("␛") || screen.plainText().contains("\u{FFFD}"))
        #expect(screen[0, 1].character == "␛")
    }

    @Test func aBracketedPasteIsBoundedAndLosesItsControls() {
        var decoder = InputDecoder()
        let start: [UInt8] = Array("\u{1B}[200~".utf8)
        let end: [UInt8] = Array("\u{1B}[201~".utf8)
        let hostile = Array("a\u{1B}]0;title\u{07}b\r\nc".utf8)
        let events = decoder.feed(start + hostile + end)
        #expect(events == [.paste("a]0;titleb\nc")])
        // A paste larger than the limit keeps the limit's worth and drops the rest.
        var big = InputDecoder()
        var pasted: [InputEvent] = big.feed(start)
        for _ in 0..<40 { pasted += big.feed(Array(repeating: UInt8(ascii: "x"), count: 64 * 1024)) }
        pasted += big.feed(end)
        guard case .paste(let text)? = pasted.first else {
            Issue.record("no paste event: \(pasted.count) events")
            return
        }
        #expect(text.utf8.count == InputDecoder.maximumPasteLength)
    }

    @Test func mouseReportsWithHugeNumbersAreIgnored() {
        var decoder = InputDecoder()
        let reports = ["\u{1B}[<0;-9223372036854775808;5M", "\u{1B}[<0;9223372036854775807;5M", "\u{1B}[<64;1;99999999999999999999M"]
        for report in reports {
            #expect(decoder.feed(Array(report.utf8)).isEmpty)
        }
        #expect(decoder.feed(Array("\u{1B}[<0;3;4M".utf8)) == [.mouse(MouseEvent(action: .press, button: 0, column: 2, row: 3))])
    }

    @Test func anEndlessControlSequenceIsDroppedAndDecodingGoesOn() {
        var decoder = InputDecoder()
        // Parameter bytes go on and on; its final byte ends it, and what follows is decoded again.
        var events = decoder.feed(Array("\u{1B}[".utf8) + Array(repeating: UInt8(ascii: "1"), count: 100_000))
        events += decoder.feed(Array(repeating: UInt8(ascii: ";"), count: 100_000))
        events += decoder.feed(Array("~x".utf8))
        #expect(events == [.character("x")])
        #expect(!decoder.hasPending)
        // A byte that cannot continue a sequence ends it too, and is itself decoded.
        var cut = InputDecoder()
        #expect(cut.feed(Array("\u{1B}[".utf8) + Array(repeating: UInt8(ascii: "2"), count: 1_000) + Array("\ry".utf8)) == [.enter, .character("y")])
    }

    @Test func manyKeysAtOnceAreAllDecoded() {
        // One feed of a million keys (a paste without bracketing): every key, in linear time.
        var decoder = InputDecoder()
        let events = decoder.feed(Array(repeating: UInt8(ascii: "k"), count: 1_000_000))
        #expect(events.count == 1_000_000)
    }
}

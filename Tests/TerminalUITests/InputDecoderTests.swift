import Testing
@testable import TerminalUI

struct InputDecoderTests {
    func decode(_ text: String, flush: Bool = true) -> [InputEvent] {
        var decoder = InputDecoder()
        var events = decoder.feed(Array(text.utf8))
        if flush { events += decoder.flush() }
        return events
    }

    @Test func keysAndCharacters() {
        #expect(decode("aé\r\t\u{7F}") == [.character("a"), .character("é"), .enter, .tab, .backspace])
        #expect(decode("\u{03}") == [.control("c")])
        #expect(decode("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D\u{1B}OA") == [.up, .down, .right, .left, .up])
        #expect(decode("\u{1B}[Z\u{1B}[3~\u{1B}[H\u{1B}[F\u{1B}[5~\u{1B}[6~") == [.backTab, .delete, .home, .end, .pageUp, .pageDown])
    }

    @Test func aLoneEscIsHeldUntilTheInputGoesQuiet() {
        var decoder = InputDecoder()
        #expect(decoder.feed([0x1B]).isEmpty)
        #expect(decoder.hasPending)
        #expect(decoder.flush() == [.escape])
        #expect(!decoder.hasPending)
    }

    @Test func anEscapeSequenceSplitAcrossReadsIsJoined() {
        var decoder = InputDecoder()
        #expect(decoder.feed([0x1B]).isEmpty)
        #expect(decoder.feed([0x5B]).isEmpty)
        #expect(decoder.feed([0x41]) == [.up])
    }

    @Test func aMultiByteCharacterSplitAcrossReadsIsJoined() {
        var decoder = InputDecoder()
        let bytes = Array("ü".utf8)
        #expect(decoder.feed([bytes[0]]).isEmpty)
        #expect(decoder.feed([bytes[1]]) == [.character("ü")])
    }

    @Test func sgrMouseReportsAreDecodedWithZeroBasedCells() {
        #expect(decode("\u{1B}[<0;10;5M\u{1B}[<0;10;5m\u{1B}[<64;1;1M") == [
            .mouse(MouseEvent(action: .press, button: 0, column: 9, row: 4)),
            .mouse(MouseEvent(action: .release, button: 0, column: 9, row: 4)),
            .mouse(MouseEvent(action: .scrollUp, button: 0, column: 0, row: 0)),
        ])
    }

    @Test func bracketedPasteArrivesAsOneEvent() {
        #expect(decode("\u{1B}[200~line one\u{1B}[201~x") == [.paste("line one"), .character("x")])
    }

    @Test func unknownSequencesAndStrayBytesAreDroppedNotTyped() {
        var decoder = InputDecoder()
        #expect(decoder.feed(Array("\u{1B}[99X\u{1B}[<1;2Mq".utf8) + [0xFF, 0x80]) == [.character("q")])
        #expect(decoder.feed([0x1B, 0x5B, 0x31]).isEmpty)
        #expect(decoder.flush().isEmpty, "an incomplete sequence after silence is dropped")
    }
}

struct ScreenDiffTests {
    func screen(_ lines: [String]) -> Screen {
        var screen = Screen(size: TerminalSize(columns: 10, rows: lines.count))
        for (row, line) in lines.enumerated() { screen.write(line, column: 0, row: row) }
        return screen
    }

    @Test func theFirstDrawWritesEveryCell() {
        let diff = ScreenDiff(from: nil, to: screen(["hello", "world"]))
        #expect(diff.cellsWritten == 20)
        #expect(diff.output.hasPrefix("\u{1B}[0m\u{1B}[2J"))
    }

    @Test func onlyChangedCellsAreWritten() {
        let before = screen(["hello", "world"])
        let after = screen(["hallo", "world"])
        let diff = ScreenDiff(from: before, to: after)
        #expect(diff.cellsWritten == 1)
        #expect(diff.output == "\u{1B}[1;2H\u{1B}[0ma")
        #expect(ScreenDiff(from: after, to: after).cellsWritten == 0)
    }

    @Test func aStyleChangeIsAChange() {
        let before = screen(["abc"])
        var after = before
        after.apply(.dim, to: Rect(x: 1, y: 0, width: 1, height: 1))
        let diff = ScreenDiff(from: before, to: after)
        #expect(diff.cellsWritten == 1)
        #expect(diff.output.contains("\u{1B}[0;2mb"))
    }

    @Test func withoutColourDestructiveRedIsDroppedButDimmingStays() {
        var next = screen(["x"])
        next[0, 0] = Cell("x", style: [.destructive, .dim])
        let diff = ScreenDiff(from: nil, to: next, colour: false)
        #expect(!diff.output.contains("31"))
        #expect(diff.output.contains("\u{1B}[0;2mx"))
    }
}

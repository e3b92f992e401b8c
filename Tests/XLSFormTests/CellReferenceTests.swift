import Testing
@testable import XLSForm

@Suite struct CellReferenceTests {
    @Test func readsAndWritesA1References() throws {
        let cell = try #require(CellReference("B14", maximumRow: 100, maximumColumn: 100))
        #expect(cell.row == 14 && cell.column == 1)
        #expect(cell.description == "B14")
        #expect(CellReference.letters(ofColumn: 25) == "Z")
        #expect(CellReference.letters(ofColumn: 26) == "AA")
        #expect(CellReference.letters(ofColumn: 701) == "ZZ")
        #expect(CellReference("$AA$3", maximumRow: 100, maximumColumn: 100)?.column == 26)
    }

    @Test func refusesWhatIsNotACellOrPastTheLimits() {
        #expect(CellReference("14B", maximumRow: 100, maximumColumn: 100) == nil)
        #expect(CellReference("B", maximumRow: 100, maximumColumn: 100) == nil)
        #expect(CellReference("B0", maximumRow: 100, maximumColumn: 100) == nil)
        #expect(CellReference("B101", maximumRow: 100, maximumColumn: 100) == nil)
        #expect(CellReference("ZZZZZZZZZZZZZZZZ1", maximumRow: 100, maximumColumn: 200) == nil)
        #expect(CellReference("A99999999999999999999999", maximumRow: 100, maximumColumn: 200) == nil)
    }
}

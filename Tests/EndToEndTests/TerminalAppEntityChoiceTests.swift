import DraftStore
import FieldSheetTesting
import Foundation
import Testing

/// A multiple choice over an entity list of 100,000 households in the app, in a real terminal (tmux) at a wide
/// and a compact size: typed text searches the list, Enter ticks the match under the cursor, the ticked ones stay
/// listed first, Backspace with nothing typed takes out the one under the cursor, and the answer is kept.
struct TerminalAppEntityChoiceTests {
    @Test(arguments: [(120, 40), (80, 24)])
    func aMultipleChoiceOverAHundredThousandEntitiesIsSearched(columns: Int, rows: Int) async throws {
        let home = TemporaryDirectory()
        let store = try DraftStore(home: home.url)
        #expect(try await HouseholdEntities.store(100_000, forms: [HouseholdEntities.round], in: store) == 100_000)
        let tmux = TmuxSession()
        try await tmux.startApp(columns: columns, rows: rows, home: home)
        try await tmux.keys("n")
        try await tmux.waitFor("Round of visits")
        try await tmux.click(on: "Round of visits")
        let opened = try await tmux.waitFor("type to search, Enter ticks")
        #expect(opened.contains("Household 00000") && !opened.contains("Household 00008"), "the first matches, never the whole list:\n\(opened)")

        try await tmux.type("household 04242")
        try await tmux.waitFor("⌕ household 04242")
        try await tmux.keys("Enter")
        try await tmux.waitFor("[x] Household 04242")
        try await tmux.type("99999")
        try await tmux.waitFor("⌕ 99999")
        try await tmux.keys("Enter")
        let ticked = try await tmux.waitFor("[x] Household 99999")
        #expect(ticked.contains("[x] Household 04242"), "both ticked, listed first:\n\(ticked)")
        // The cursor is on the first ticked one after Enter: → moves to the second, Backspace takes it out.
        try await tmux.keys("Right", "BSpace")
        let removed = try await tmux.waitFor("Household 99999 unticked") { $0.contains("[x] Household 04242") && !$0.contains("[x] Household 99999") }
        #expect(removed.contains("[x] Household 04242"))
        try await tmux.keys("Escape")
        try await tmux.waitForDraftKept()
        let kept = await eventually(timeout: 30) {
            guard let draft = try? await store.records(state: .draft).first else { return false }
            return (try? await store.record(draft.id))?.answers["visited"] == .choices([HouseholdEntities.id(4242)])
        }
        #expect(kept, "the draft keeps the one household still ticked")
    }
}

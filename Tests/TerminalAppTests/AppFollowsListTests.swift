import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import Synchronization
import Testing
@testable import TerminalApp
@testable import TerminalUI

/// The home list follows the device database (DraftStore's `observeRecords`): a record another process writes
/// on the same home shows in the list without a key pressed and without the app reading the list itself.
struct AppFollowsListTests {
    @Test func aRecordFilledByAnotherProcessShowsWithoutAKeypress() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let store = try DraftStore(home: URL(fileURLWithPath: cli.home))
        let model = AppModel(store: store, size: TerminalSize(columns: 120, rows: 40))
        let redraws = Counter()
        let following = Task { await model.followRecords { redraws.increment() } }
        defer { following.cancel() }
        #expect(await eventually(timeout: 30) { redraws.value >= 1 }, "the first value of the observation was not shown")
        #expect(await model.home.records.isEmpty)

        // The fieldsheet CLI, another process on the same home, keeps a draft (exit status 3: kept).
        let fill = try await cli.run(["fill", "follow-up-job", "--set", "site=Depot 7", "--dismiss"])
        #expect(fill.status == 3, "\(fill.output)")
        let shown = await eventually(timeout: 30) { await model.home.records.map(\.headline) == ["Depot 7"] }
        let headlines = await model.home.records.map(\.headline)
        #expect(shown, "the list shows \(headlines) after another process wrote a record")
        // The model takes the new list before it asks for the redraw: the request follows shortly.
        #expect(await eventually(timeout: 10) { redraws.value >= 2 }, "the runner was not told to redraw")
        #expect(await model.home.records.first?.state == .draft)
        #expect(await model.render().plainText().contains("Depot 7"))
    }

    /// The app's own sheet reaches the list through the same observation: nothing is read by hand after Esc, and
    /// the list shows the new record, then the edited one, with its headline as typed, selected.
    @Test func theAppsOwnSheetReachesTheListThroughTheObservation() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let store = try DraftStore(home: URL(fileURLWithPath: cli.home))
        let model = AppModel(store: store, size: TerminalSize(columns: 120, rows: 40))
        let redraws = Counter()
        let following = Task { await model.followRecords { redraws.increment() } }
        defer { following.cancel() }
        #expect(await eventually(timeout: 30) { redraws.value >= 1 }, "the first value of the observation was not shown")

        try await model.startNew(formID: "follow-up-job")
        for character in "Depot 9" { _ = await model.handle(.character(character)) }
        _ = await model.handle(.escape)
        let listed = await eventually(timeout: 30) { await model.home.records.map(\.headline) == ["Depot 9"] }
        let headlines = await model.home.records.map(\.headline)
        #expect(listed, "the list shows \(headlines) after the sheet closed")
        #expect(await model.home.selected?.headline == "Depot 9", "the record whose sheet closed is selected")

        // Opened again from the list and edited: the list shows the edit once the sheet closes.
        _ = await model.handle(.enter)
        _ = await model.handle(.backspace)
        _ = await model.handle(.character("X"))
        _ = await model.handle(.escape)
        let edited = await eventually(timeout: 30) { await model.home.records.map(\.headline) == ["Depot X"] }
        let after = await model.home.records.map(\.headline)
        #expect(edited, "the list shows \(after) after the edited record's sheet closed")
        #expect(await model.render().plainText().contains("Depot X"))
    }
}

/// Counts calls from any thread.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

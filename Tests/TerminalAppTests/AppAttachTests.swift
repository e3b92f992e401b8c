import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import Testing
@testable import TerminalApp
@testable import TerminalUI

/// Attaching a file in the app is explained where a person looks: in the empty field itself and in F1; Tab
/// completes the path typed so far; the notice and the field say what was attached.
struct AppAttachTests {
    let directory = TemporaryDirectory()
    let store: DraftStore
    let model: AppModel

    init() async throws {
        store = try DraftStore(home: directory.url)
        _ = try await store.importForms([SampleForms.damageReport()])
        model = AppModel(store: store, size: TerminalSize(columns: 120, rows: 40))
        await model.reload()
    }

    func press(_ events: InputEvent...) async {
        for event in events { _ = await model.handle(event) }
    }

    func type(_ text: String) async {
        for character in text { _ = await model.handle(.character(character)) }
    }

    func screen() async -> String { await model.render().plainText() }

    @Test(arguments: [TerminalSize(columns: 120, rows: 40), TerminalSize(columns: 80, rows: 24)])
    func theFieldSaysHowTabCompletesAndEnterAttaches(size: TerminalSize) async throws {
        let files = TemporaryDirectory("photos")
        SampleForms.writeRandomFile(files.file("IMG_0042.jpg"), size: 48_213, seed: 42)
        SampleForms.writeRandomFile(files.file("IMG_0043.jpg"), size: 1_000, seed: 43)
        _ = files.write("notes.txt", "not a photo")
        await model.resize(size)
        try await model.startNew(formID: "damage-report")
        await type("Depot")
        await press(.tab)
        #expect(await model.presented?.sheet.focus == .field("photo"))
        var shown = await screen()
        #expect(shown.contains(SheetState.attachHint), "the empty photo field says how to attach:\n\(shown)")

        await press(.function(1))
        shown = await screen()
        #expect(shown.contains("Tab completes, Enter attaches"), "F1 says it:\n\(shown)")
        await press(.escape)

        // Tab completes as far as the names agree and lists what is left; then to the one file.
        await type(files.file("IMG"))
        await press(.tab)
        shown = await screen()
        #expect(await model.presented?.sheet.typedAttachPath?.path == files.file("IMG_004"), "completed to the common start")
        #expect(shown.contains("/IMG_004 "), "the field shows the completed path:\n\(shown)")
        #expect(shown.contains("IMG_0042.jpg  IMG_0043.jpg"), "the matches are listed:\n\(shown)")
        #expect(await model.presented?.sheet.focus == .field("photo"), "Tab with a path typed stays in the field")
        await type("2")
        await press(.tab)
        #expect(await model.presented?.sheet.typedAttachPath?.path == files.file("IMG_0042.jpg"))
        await press(.enter)
        shown = await screen()
        #expect(shown.contains("Attached IMG_0042.jpg (image/jpeg, 47 KB)"), "the notice says what was attached:\n\(shown)")
        #expect(!shown.contains(SheetState.attachHint))

        // A folder completes with its slash; a name that matches nothing is said.
        await press(.tab)
        let name = (files.path as NSString).lastPathComponent
        await type(files.path + "/../" + name.dropLast(2))
        await press(.tab)
        #expect(await model.presented?.sheet.typedAttachPath?.path == files.path + "/../" + name + "/", "a folder completes with its slash")
        await type("zzz")
        await press(.tab)
        shown = await screen()
        #expect(shown.contains("No file starts with"), "\(shown)")
    }
}

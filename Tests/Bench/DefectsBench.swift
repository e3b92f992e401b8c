// The 5,000-defect figures: the example defect form (Schema/forms/defect-inspection.json) without its cap of
// 500 instances, filled by address as `fieldsheet fill --set` does, opened, and typed into in the app.
import DraftStore
import Foundation
import FormModel
import TerminalApp
import TerminalUI

/// The example defect form, as `defect-5k` with no cap on its defects.
func uncappedDefectForm() throws -> FormDefinition {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Schema/forms/defect-inspection.json")
    let result = FormLoader().load(contentsOf: file.path)
    guard var form = result.loaded?.form else {
        throw DefectsBenchError(message: "\(file.path) did not load: \(result.findings.map(\.message).joined(separator: "; "))")
    }
    form.id = "defect-5k"
    for page in form.pages.indices {
        for field in form.pages[page].fields.indices where form.pages[page].fields[field].kind == .repeat {
            form.pages[page].fields[field].maxCount = nil
        }
    }
    return form
}

struct DefectsBenchError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Fills a new record with `count` defects (each one's location, as `--set 'defects[N].location=…'`), in one
/// `set(addressed:)` as the command line does; returns the session still open and the time it took.
func fillDefects(_ count: Int, in store: DraftStore) async throws -> (FormSession, UInt64) {
    let session = try await store.newRecord(formID: "defect-5k")
    var inputs: [(address: String, input: String)] = [("site", "Bench site")]
    for instance in 1...count { inputs.append(("defects[\(instance)].location", "room \(instance)")) }
    let start = nanos()
    try await session.set(addressed: inputs)
    return (session, nanos() - start)
}

/// Section 2c: scripted filling at 500 and 5,000 defects (linear in the answers?), opening the 5,000-defect
/// draft, and in the full-screen app: opening it, Next to the Defects step, typing there, and Esc.
func benchDefects(in directory: URL) async throws {
    let store = try DraftStore(home: directory)
    try await store.importForms([try uncappedDefectForm()])
    var perAnswer: [Int: Double] = [:]
    for count in [500, 5_000] {
        let (session, took) = try await fillDefects(count, in: store)
        perAnswer[count] = Double(took) / 1_000 / Double(count)
        print("fill a record with \(count) defects by address (FormSession.set(addressed:), one transaction): \(milliseconds(took)), \(String(format: "%.1f", perAnswer[count] ?? 0)) µs per answer  (target: linear in the answers)")
        try await session.dismiss(reason: .escape)
    }
    if let small = perAnswer[500], let large = perAnswer[5_000] {
        print("  cost per answer at 5,000 / at 500: \(String(format: "%.2f", large / small))×  (target: about 1×)")
    }
    let (filled, _) = try await fillDefects(5_000, in: store)
    let id = filled.recordID
    try await filled.dismiss(reason: .escape)

    var opens: [UInt64] = []
    for _ in 0..<20 {
        let start = nanos()
        let opened = try await store.resumeDraft(id)
        opens.append(nanos() - start)
        try await opened.dismiss(reason: .escape)
    }
    report("open a draft with 5,000 defects (resumeDraft, evaluated)", opens, target: "<= 100 ms")

    let model = AppModel(store: store, size: TerminalSize(columns: 120, rows: 40))
    await model.reload()
    var start = nanos()
    try await model.openRecord(id)
    let keys = await AppKeys(model)
    print("open the 5,000-defect record in the app, first screen drawn: \(milliseconds(nanos() - start))  (target: <= 100 ms)")
    // The Site step's focus order: Site, Inspected on, Next visit, then Next.
    let tabs = SheetState(form: filled.form, answers: [:]).focusOrder.firstIndex(of: .next) ?? 0
    for _ in 0..<tabs { _ = await keys.press(.tab) }
    let next = await keys.press(.enter)
    print("Next to the Defects step (5,000 defects), screen drawn: \(milliseconds(next))  (target: <= 100 ms)")
    // The focus is now on the step's first answer, Defect 1's Where: type into it and delete again.
    var typing: [UInt64] = []
    for round in 0..<50 {
        let text = "x\(round)"
        for character in text { typing.append(await keys.press(.character(character))) }
        for _ in text { typing.append(await keys.press(.backspace)) }
    }
    report("keystroke to screen, typing in a 5,000-defect record (autosave included)", typing, target: "p99 <= 16 ms")
    var tabbing: [UInt64] = []
    for _ in 0..<100 { tabbing.append(await keys.press(.tab)) }
    report("keystroke to screen, Tab through a 5,000-defect record", tabbing, target: "p99 <= 16 ms")
    start = nanos()
    _ = await model.handle(.escape)
    _ = await model.render()
    print("Esc (kept as a draft) from the 5,000-defect record, home drawn: \(milliseconds(nanos() - start))  (target: <= 100 ms)")
    // Esc again, from the record opened and typed into once more (an edit, so the list's headline, details and
    // search text are read again as after any change), five times.
    var escapes: [UInt64] = []
    for round in 0..<5 {
        try await model.openRecord(id)
        for _ in 0..<tabs { _ = await keys.press(.tab) }
        _ = await keys.press(.enter)
        _ = await keys.press(.character(Character(String(round))))
        start = nanos()
        _ = await model.handle(.escape)
        _ = await model.render()
        escapes.append(nanos() - start)
        await model.waitForSearchIndex()
    }
    report("Esc after an edit from the 5,000-defect record, home drawn", escapes, target: "<= 100 ms")

    // The same with the list observed, as the full-screen app runs (DraftStore's observeRecords: every autosave
    // is a commit the list sees while the sheet is open), and a keystroke's cost with it.
    let following = Task { await model.followRecords {} }
    defer { following.cancel() }
    var observedEscapes: [UInt64] = []
    var observedTyping: [UInt64] = []
    for round in 0..<5 {
        try await model.openRecord(id)
        for _ in 0..<tabs { _ = await keys.press(.tab) }
        _ = await keys.press(.enter)
        for character in "y\(round)" { observedTyping.append(await keys.press(.character(character))) }
        start = nanos()
        _ = await model.handle(.escape)
        _ = await model.render()
        observedEscapes.append(nanos() - start)
        await model.waitForSearchIndex()
    }
    report("keystroke to screen with the list observed (autosave included)", observedTyping, target: "p99 <= 16 ms")
    report("Esc after an edit with the list observed, home drawn", observedEscapes, target: "<= 100 ms")
}

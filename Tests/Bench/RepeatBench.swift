// The repeat figures: a record of 200 instances × 10 fields (and a total summed over them) edited and opened
// through FormSession, and typed into in the full-screen app.
import DraftStore
import Foundation
import FormModel
import TerminalApp
import TerminalUI

/// The form of the repeat figures: 200 instances are filled into its `items`, whose `cost` the `total` sums.
let repeatBenchForm: FormDefinition = {
    let instanceFields = (0..<9).map { FieldDefinition(id: "r\($0)", kind: .text, label: "R\($0)") }
        + [FieldDefinition(id: "cost", kind: .decimal, label: "Cost", constraint: ". >= 0")]
    return FormDefinition(id: "repeat-200", title: "Repeat Bench", completionLabel: "Submit", pages: [FormPage(id: "p", fields: [
        FieldDefinition(id: "items", kind: .repeat, label: "Items", fields: instanceFields, instanceLabel: "Item"),
        FieldDefinition(id: "total", kind: .decimal, label: "Total", calculation: "sum(items.cost)"),
    ])])
}()

/// Starts a draft of ``repeatBenchForm`` with 200 instances, every field answered; returns it still open.
func startRepeatRecord(in store: DraftStore) async throws -> FormSession {
    let session = try await store.newRecord(formID: repeatBenchForm.id)
    var inputs: [(address: String, input: String)] = []
    for instance in 1...200 {
        for field in 0..<9 { inputs.append(("items[\(instance)].r\(field)", "answer \(instance)-\(field)")) }
        inputs.append(("items[\(instance)].cost", "\(instance)"))
    }
    try await session.set(addressed: inputs)
    return session
}

/// Section 2b: one edit of an instance's field made durable with the total recomputed, and opening the record.
func benchRepeatRecord(in store: DraftStore) async throws {
    try await store.importForms([repeatBenchForm])
    let session = try await startRepeatRecord(in: store)
    let prefixes = await session.instances(of: "items").map(\.prefix)
    var edits: [UInt64] = []
    for index in 0..<2_000 {
        let start = nanos()
        try await session.set(prefixes[index % prefixes.count] + "/cost", to: .integer(index % 500))
        edits.append(nanos() - start)
    }
    report("edit one field of a 200-instance × 10-field record, its sum() recomputed (FormSession.set)", edits, target: "p99 <= 0.5 ms")
    try await session.dismiss(reason: .escape)
    var opens: [UInt64] = []
    for _ in 0..<200 {
        let start = nanos()
        let opened = try await store.resumeDraft(session.recordID)
        opens.append(nanos() - start)
        try await opened.dismiss(reason: .escape)
    }
    report("open a draft with 200 repeat instances × 10 fields (resumeDraft, evaluated)", opens, target: "<= 10 ms")
}

/// A keystroke in the full-screen app on a record of 200 instances: Tab through the sheet to the 100th
/// instance's cost (the sheet scrolls through instances), then typing a number there and deleting it (each
/// digit made durable, the total recomputed, the screen drawn).
func benchRepeatKeystrokes(in directory: URL) async throws {
    let store = try DraftStore(home: directory)
    try await store.importForms([repeatBenchForm])
    let filled = try await startRepeatRecord(in: store)
    let target = await filled.instances(of: "items")[99].prefix + "/cost"
    let id = filled.recordID
    try await filled.dismiss(reason: .escape)
    // Where the target sits in the sheet's focus order, as the app will build it.
    let probe = try await store.resumeDraft(id)
    var sheet = SheetState(form: probe.form, answers: probe.openedAnswers)
    let tabs = sheet.focusOrder.firstIndex(of: .field(target))
    try await probe.dismiss(reason: .escape)
    guard let tabs else { fatalError("\(target) is not in the sheet's focus order") }
    // The sheet's own share of a typed digit: the answer shown, the total and the rows recomputed, no storage.
    sheet.focus(on: .field(target))
    var sheetEdits: [UInt64] = []
    for round in 0..<100 {
        let digits = "\(round + 1)5"
        for event in digits.map(InputEvent.character) + Array(repeating: .backspace, count: digits.count) {
            let start = nanos()
            _ = sheet.handle(event)
            sheetEdits.append(nanos() - start)
        }
    }
    report("the sheet alone handling a typed digit in a 200-instance record (no storage, no drawing)", sheetEdits, target: "none")

    let model = AppModel(store: store, size: TerminalSize(columns: 120, rows: 40))
    await model.reload()
    let opening = nanos()
    try await model.openRecord(id)
    let keys = await AppKeys(model)
    print("open the 200-instance record in the app, first screen drawn: \(milliseconds(nanos() - opening)) (target: none)")
    var tabbing: [UInt64] = []
    for _ in 0..<tabs { tabbing.append(await keys.press(.tab)) }
    report("keystroke to screen, Tab through a 200-instance record (\(tabs) fields)", tabbing, target: "p99 <= 16 ms")
    keys.resetDrawing()
    var typing: [UInt64] = []
    for round in 0..<100 {
        for digit in "\(round + 1)5" { typing.append(await keys.press(.character(digit))) }
        for _ in 0..<"\(round + 1)5".count { typing.append(await keys.press(.backspace)) }
    }
    report("keystroke to screen, typing in a 200-instance record, the total recomputed (autosave included)", typing, target: "p99 <= 16 ms")
    report("  of which drawing the screen and its diff", keys.drawing, target: "none")
    _ = await model.handle(.escape)
}

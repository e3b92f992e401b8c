// fieldsheet-bench [DIR]: the device database's speed and memory (see BENCHMARKS.md; run with `make bench`).
//
// Figures: one edit made durable (FormSession.set: WAL commit with synchronous=FULL) p50/p99/max over
// 10,000 edits; opening a draft of a 200-field form; the encrypted store against one in clear; editing and opening a record of 200 repeat instances; filling, opening and typing into a record of 5,000 defects; listing 10,000 drafts; RSS as the record count grows;
// the app's keystrokes and home screen; a commit reaching an observer of the 10,000-record list; attaching a
// 10 MB photo until durable.
// DIR (default: the system temporary directory) should be on the disk the device would use: fsync is the cost.
import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import GRDB
import TerminalApp
import TerminalUI

func nanos() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func milliseconds(_ ns: UInt64) -> String { String(format: "%.3f ms", Double(ns) / 1_000_000) }

func percentiles(_ samples: [UInt64]) -> (p50: UInt64, p99: UInt64, max: UInt64) {
    let sorted = samples.sorted()
    func at(_ fraction: Double) -> UInt64 { sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] }
    return (at(0.50), at(0.99), sorted.last ?? 0)
}

/// Resident set size in MiB, from /proc/self/status.
func residentMiB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kib = Double(line.split(separator: " ")[1])
    else { return 0 }
    return kib / 1024
}

func machine() -> String {
    let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
        .split(separator: "\n").first { $0.hasPrefix("model name") }?
        .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
    let memory = ProcessInfo.processInfo.physicalMemory / 1_048_576
    return "\(ProcessInfo.processInfo.activeProcessorCount) cores (nproc), \(cpu), \(memory) MiB memory"
}

func report(_ name: String, _ samples: [UInt64], target: String) {
    let (p50, p99, maximum) = percentiles(samples)
    print("\(name): p50 \(milliseconds(p50)), p99 \(milliseconds(p99)), max \(milliseconds(maximum)) over \(samples.count)  (target: \(target))")
}

/// One durable one-row commit through GRDB's async write, as FormSession.set uses it.
func baselineCommit(_ pool: DatabasePool, _ value: String) async throws {
    let _: Void = try await pool.write { db in try db.execute(sql: "UPDATE t SET v = ? WHERE id = 1", arguments: [value]) }
}

let base = CommandLine.arguments.count > 1 ? URL(fileURLWithPath: CommandLine.arguments[1]) : FileManager.default.temporaryDirectory
let directory = base.appendingPathComponent("fieldsheet-bench-\(UUID().uuidString.prefix(8))")
defer { try? FileManager.default.removeItem(at: directory) }
/// Ends a run of one section (`FIELDSHEET_BENCH_ONLY`), removing its databases first (`exit` skips `defer`).
func finish() -> Never {
    try? FileManager.default.removeItem(at: directory)
    exit(0)
}
print("machine: \(machine())")
print("database: \(directory.path)")

// First, while the process is small, so its peak memory is the import's.
// A run of one section (`FIELDSHEET_BENCH_ONLY`) runs that section alone.
let only = ProcessInfo.processInfo.environment["FIELDSHEET_BENCH_ONLY"]
if only == nil || only == "xlsform" { try benchXLSFormImport(in: directory.appendingPathComponent("xlsform")) }
if only == "xlsform" { finish() }
if only == nil || only == "attach" { try await benchAttach(in: directory.appendingPathComponent("attach")) }
if only == "attach" { finish() }
#if !canImport(CryptoKit) && canImport(CryptoBoringWrapper)
if only == "cipher" {
    try benchCipher()
    finish()
}
#endif
if ProcessInfo.processInfo.environment["FIELDSHEET_BENCH_ONLY"] == "encryption" {
    try await benchEncryption(in: directory.appendingPathComponent("encryption"))
    finish()
}
if ProcessInfo.processInfo.environment["FIELDSHEET_BENCH_ONLY"] == "repeat" {
    try await benchRepeatRecord(in: try DraftStore(home: directory.appendingPathComponent("repeat")))
    finish()
}
if ProcessInfo.processInfo.environment["FIELDSHEET_BENCH_ONLY"] == "defects" {
    try await benchDefects(in: directory.appendingPathComponent("defects"))
    finish()
}
if ProcessInfo.processInfo.environment["FIELDSHEET_BENCH_ONLY"] == "repeat-app" {
    try await benchRepeatKeystrokes(in: directory.appendingPathComponent("app-repeat"))
    finish()
}

let store = try DraftStore(home: directory)
try await store.importForms([SampleForms.wideForm(id: "wide-20", fieldCount: 20), SampleForms.wideForm(id: "wide-200", fieldCount: 200)])

// 0. Baseline: the disk's own cost of a durable commit (one-row UPDATE, WAL, synchronous=FULL), same directory.
do {
    var configuration = Configuration()
    configuration.label = "baseline"
    let pool = try DatabasePool(path: directory.appendingPathComponent("baseline.sqlite").path, configuration: configuration)
    try pool.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA synchronous = FULL")
        try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, '')")
    }
    var samples: [UInt64] = []
    for index in 0..<10_000 {
        let start = nanos()
        try await baselineCommit(pool, "value \(index)")
        samples.append(nanos() - start)
    }
    report("baseline: one-row commit, WAL + synchronous=FULL", samples, target: "the disk's floor")
}

// 1. One edit made durable.
do {
    let session = try await store.newRecord(formID: "wide-20")
    for warmup in 0..<200 { try await session.set("f\(warmup % 20)", to: .text("warm \(warmup)")) }
    var samples: [UInt64] = []
    samples.reserveCapacity(10_000)
    for index in 0..<10_000 {
        let start = nanos()
        try await session.set("f\(index % 20)", to: .text("value \(index)"))
        samples.append(nanos() - start)
    }
    try await session.dismiss(reason: .escape)
    report("edit made durable (FormSession.set)", samples, target: "p99 <= 0.5 ms")
}

// 2. Opening a draft of a 200-field form (every field answered).
do {
    let session = try await store.newRecord(formID: "wide-200")
    for index in 0..<200 { try await session.set("f\(index)", to: .text("answer number \(index) with some typical length")) }
    try await session.dismiss(reason: .escape)
    var samples: [UInt64] = []
    for _ in 0..<500 {
        let start = nanos()
        let opened = try await store.resumeDraft(session.recordID)
        samples.append(nanos() - start)
        try await opened.dismiss(reason: .escape)
    }
    report("open a draft of a 200-field form (resumeDraft)", samples, target: "<= 2 ms")
}

// 2a. The encrypted store against the same store in clear: an edit, opening a 200-field draft, a 10,000-record list.
try await benchEncryption(in: directory.appendingPathComponent("encryption"))

// 2b. A record with 200 repeat instances of 10 fields (and a total summed over them): opening it, and one
// edit of an instance's field made durable with the total recomputed (only what depends on the edit).
try await benchRepeatRecord(in: store)

// 3 and 4. Listing drafts, and memory as the number of records grows.
do {
    var created = 0
    var memory: [(Int, Double)] = []
    for level in [1_000, 2_500, 5_000, 10_000] {
        while created < level {
            let session = try await store.newRecord(formID: "wide-20")
            try await session.set("f0", to: .text("draft \(created)"))
            try await session.dismiss(reason: .escape)
            created += 1
        }
        try await store.forEachRecord(state: .draft) { _ in }
        memory.append((level, residentMiB()))
    }
    var streamed: [UInt64] = []
    var collected: [UInt64] = []
    for _ in 0..<20 {
        var start = nanos()
        let drafts = try await store.records(state: .draft)
        collected.append(nanos() - start)
        precondition(drafts.count >= 10_000)
        start = nanos()
        try await store.forEachRecord(state: .draft) { _ in }
        streamed.append(nanos() - start)
    }
    report("list \(created + 2) drafts into an array (records(state:))", collected, target: "<= 50 ms")
    report("list \(created + 2) drafts streamed (forEachRecord)", streamed, target: "<= 50 ms")
    print("RSS after creating and listing N drafts: " + memory.map { "\($0.0): \(String(format: "%.1f", $0.1)) MiB" }.joined(separator: ", "))
}

// 5. A keystroke in the full-screen app to an updated screen: the edit made durable, the screen drawn,
//    and only the changed cells written (120×40, a form sheet over the home screen).
do {
    let appStore = try DraftStore(home: directory.appendingPathComponent("app"))
    guard let form = FormLoader().load(contentsOf: PackagePaths.file("Schema/forms/follow-up-job.json")).loaded?.form else {
        fatalError("Schema/forms/follow-up-job.json must load; run the benchmark from the package root (make bench)")
    }
    _ = try await appStore.importForms([form])
    let model = AppModel(store: appStore, size: TerminalSize(columns: 120, rows: 40))
    await model.reload()
    try await model.startNew(formID: form.id)
    var shown = await model.render()
    var samples: [UInt64] = []
    var cells = 0
    for index in 0..<2_000 {
        let key: InputEvent = index % 20 == 19 ? .control("u") : .character(Character(UnicodeScalar(UInt8(97 + index % 26))))
        let start = nanos()
        _ = await model.handle(key)
        let screen = await model.render()
        let diff = ScreenDiff(from: shown, to: screen)
        samples.append(nanos() - start)
        cells += diff.cellsWritten
        shown = screen
    }
    report("keystroke to updated screen, autosave included (full-screen app, 120x40)", samples, target: "p99 <= 16 ms")
    print("cells written per keystroke: \(cells / samples.count) on average, of \(120 * 40) on the screen")
}

// 5b. The same on a record of 200 repeat instances: Tab through it, type a cost (the total follows).
try await benchRepeatKeystrokes(in: directory.appendingPathComponent("app-repeat"))

// 5c. The defect form at 5,000 defects: scripted filling (linear?), opening, and the app's keystrokes.
try await benchDefects(in: directory.appendingPathComponent("defects"))

// 6. The home screen over the ten thousand drafts above: opening it (the one summary query), and a
//    keystroke to an updated screen while scrolling, filtering and searching (120×40).
do {
    let model = AppModel(store: store, size: TerminalSize(columns: 120, rows: 40))
    var opening: [UInt64] = []
    for _ in 0..<10 {
        let start = nanos()
        await model.reload()
        _ = await model.render()
        opening.append(nanos() - start)
    }
    let count = try await store.recordListSummaries().count
    report("open the home screen with \(count) records (list query, headlines on screen, details of the selected)", opening, target: "p99 <= 100 ms")
    let keys = await AppKeys(model)
    var scrolling: [UInt64] = []
    for index in 0..<2_000 {
        let key: InputEvent = index % 100 == 99 ? .pageDown : (index % 400 < 300 ? .down : .up)
        scrolling.append(await keys.press(key))
    }
    report("keystroke to screen, scrolling \(count) records", scrolling, target: "p99 <= 16 ms")
    var filtering: [UInt64] = []
    for _ in 0..<100 {
        filtering.append(await keys.press(.character("f")))
        filtering.append(await keys.press(.character("1")))  // drafts off: the list empties
        filtering.append(await keys.press(.character("1")))  // and back
        filtering.append(await keys.press(.escape))
    }
    report("keystroke to screen, filtering \(count) records (f, toggle, toggle, Esc)", filtering, target: "p99 <= 16 ms")
    // The search index is read in the background after the list loads; how long that takes, then keystrokes.
    let indexStart = nanos()
    await model.waitForSearchIndex()
    let indexing = nanos() - indexStart
    _ = await keys.press(.character("/"))
    var searching: [UInt64] = []
    for round in 0..<50 {
        for character in "draft \(round)" { searching.append(await keys.press(.character(character))) }
        for _ in 0..<"draft \(round)".count { searching.append(await keys.press(.backspace)) }
    }
    _ = await keys.press(.escape)
    print("search index of \(count) records' values, read in the background after opening: \(milliseconds(indexing)) still to wait after the figures above")
    report("keystroke to screen, searching \(count) records' values", searching, target: "p99 <= 16 ms")
    print("load during the home-screen figures: \((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "unknown") (1, 5, 15 min)")
}

// 7. Observation: a FormSession commit reaching an observer of the record list (observeRecords) over the
//    ten thousand drafts above; and what an idle observation costs.
do {
    let (arrivals, arrival) = AsyncStream.makeStream(of: (UInt64, Int).self)
    let observedRecord = try await store.newRecord(formID: "wide-20")
    try await observedRecord.set("f0", to: .text("observed"))
    let recordID = observedRecord.recordID
    let observer = Task {
        for try await list in store.observeRecords() {
            arrival.yield((nanos(), list.first { $0.id == recordID }?.waitingChanges ?? -1))
        }
    }
    var iterator = arrivals.makeAsyncIterator()
    func waitFor(_ waiting: Int) async -> UInt64 {
        while let (time, seen) = await iterator.next(isolation: #isolation) {
            if seen == waiting { return time }
        }
        fatalError("the observation ended")
    }
    var expected = try await store.outboxCount(record: recordID)
    _ = await waitFor(expected)
    let count = try await store.recordListSummaries().count
    var fromCall: [UInt64] = []
    var fromCommit: [UInt64] = []
    for index in 0..<500 {
        let start = nanos()
        try await observedRecord.set("f\(index % 20)", to: .text("seen \(index)"))
        let committed = nanos()
        expected += 1
        let seen = await waitFor(expected)
        fromCall.append(seen - start)
        // The observer may hold the new list before `set` has returned to this task: that counts as 0.
        fromCommit.append(seen > committed ? seen - committed : 0)
    }
    report("FormSession.set to the list observer, \(count) records (edit made durable included)", fromCall, target: "p99 <= 16 ms")
    report("commit to the list observer, \(count) records (after set returned)", fromCommit, target: "p99 <= 16 ms")

    // Idle: the observation waits on the database's files; nothing is read until something commits.
    var before = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &before)
    let idleStart = nanos()
    try await Task.sleep(for: .seconds(3))
    var after = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &after)
    func cpu(_ usage: rusage) -> Double {
        Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
    }
    print(String(format: "idle list observation: %.1f ms of CPU over %.1f s (target: none)", cpu(after) - cpu(before), Double(nanos() - idleStart) / 1e9))
    observer.cancel()
    try await observedRecord.dismiss(reason: .escape)
}

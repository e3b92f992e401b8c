import DraftStore
import FieldSheetTesting
import Foundation

/// The encrypted device store against the same store in clear, in one sitting: one edit made durable, opening
/// a draft of a 200-field form, and listing 10,000 records. The two stores sit side by side in `directory`; each
/// figure is over all rounds, and the ratio is encrypted / clear.
///
/// A round makes 1,000 edits in each store (which store goes first alternates), then opens the 200-field draft
/// 50 times in each **pair by pair**: one open (and its dismissal) in one store, then one in the other, the
/// order swapped every pair; then lists each store twice. Until 2026-11-29 the opens ran store by store, each
/// store's 50 right after its own 1,000 edits (one block of ~0.1 s per store and round): the ratio of one
/// round's two p50s then moved 0.91–1.46× within a run, with no pattern by which store went first, so whatever
/// the machine did during one store's block (other processes, the background checkpoint its edits had just
/// started) fell on that store alone, and the run's ratio moved ±0.15 between runs of the same binary. Taken
/// pair by pair, both stores' opens share each moment and the same work is measured (BENCHMARKS.md, device
/// encryption, "The per-value functions on SQLite's C API; the open measured pair by pair").
/// `FIELDSHEET_BENCH_OPENS=blocks` runs the opens the old way, to compare; `FIELDSHEET_BENCH_ROUNDS=1` prints
/// each round's open p50 of both stores.
///
/// `FIELDSHEET_BENCH_LIST_DRAFTS` sets how many one-field drafts each store gets (default 10,000): fewer to
/// profile the edit and the open alone without the set-up's cost.
func benchEncryption(in directory: URL) async throws {
    let environment = ProcessInfo.processInfo.environment
    let listed = environment["FIELDSHEET_BENCH_LIST_DRAFTS"].flatMap(Int.init) ?? 10_000
    let opensInBlocks = environment["FIELDSHEET_BENCH_OPENS"] == "blocks"
    let printRounds = environment["FIELDSHEET_BENCH_ROUNDS"] == "1"
    try? FileManager.default.removeItem(at: directory)
    let clear = try DraftStore(home: directory.appendingPathComponent("clear"), options: .init(encryption: .none))
    let sealed = try DraftStore(home: directory.appendingPathComponent("encrypted"))
    precondition(!clear.isEncrypted && sealed.isEncrypted)
    let stores = [("clear", clear), ("encrypted", sealed)]
    var drafts: [String: UUID] = [:]
    for (name, store) in stores {
        try await store.importForms([SampleForms.wideForm(id: "wide-20", fieldCount: 20), SampleForms.wideForm(id: "wide-200", fieldCount: 200)])
        let wide = try await store.newRecord(formID: "wide-200")
        for index in 0..<200 { try await wide.set("f\(index)", to: .text("answer number \(index) with some typical length")) }
        try await wide.dismiss(reason: .escape)
        drafts[name] = wide.recordID
        for index in 0..<listed {
            let session = try await store.newRecord(formID: "wide-20")
            try await session.set("f0", to: .text("draft \(index)"))
            try await session.dismiss(reason: .escape)
        }
    }
    var edits: [String: [UInt64]] = [:]
    var opens: [String: [UInt64]] = [:]
    var lists: [String: [UInt64]] = [:]
    var sessions: [String: FormSession] = [:]
    for (name, store) in stores {
        let session = try await store.newRecord(formID: "wide-20")
        for warmup in 0..<200 { try await session.set("f\(warmup % 20)", to: .text("warm \(warmup)")) }
        sessions[name] = session
    }
    let rounds = 10
    func edit(_ name: String, round: Int) async throws {
        let session = sessions[name]!
        for index in 0..<1_000 {
            let start = nanos()
            try await session.set("f\(index % 20)", to: .text("value \(round) \(index)"))
            edits[name, default: []].append(nanos() - start)
        }
    }
    func open(_ name: String, _ store: DraftStore) async throws {
        let start = nanos()
        let opened = try await store.resumeDraft(drafts[name]!)
        opens[name, default: []].append(nanos() - start)
        try await opened.dismiss(reason: .escape)
    }
    func list(_ name: String, _ store: DraftStore) async throws {
        for _ in 0..<2 {
            let start = nanos()
            try await store.forEachRecord(state: .draft) { _ in }
            lists[name, default: []].append(nanos() - start)
        }
    }
    print("encryption: opens \(opensInBlocks ? "store by store, each after its own edits (FIELDSHEET_BENCH_OPENS=blocks)" : "pair by pair, the order swapped every pair")")
    for round in 0..<rounds {
        let ordered = round % 2 == 0 ? stores : stores.reversed()
        let before = (opens["clear"]?.count ?? 0, opens["encrypted"]?.count ?? 0)
        if opensInBlocks {
            for (name, store) in ordered {
                try await edit(name, round: round)
                for _ in 0..<50 { try await open(name, store) }
                try await list(name, store)
            }
        } else {
            for (name, _) in ordered { try await edit(name, round: round) }
            for pair in 0..<50 {
                for (name, store) in pair % 2 == 0 ? ordered : ordered.reversed() { try await open(name, store) }
            }
            for (name, store) in ordered { try await list(name, store) }
        }
        if printRounds {
            let (clearP50, encryptedP50) = (percentiles(Array(opens["clear"]![before.0...])).p50, percentiles(Array(opens["encrypted"]![before.1...])).p50)
            print("encryption: round \(round) (\(ordered[0].0) first): open p50 clear \(milliseconds(clearP50)), encrypted \(milliseconds(encryptedP50)), "
                + String(format: "ratio %.2f×", Double(encryptedP50) / Double(clearP50)))
        }
    }
    for session in sessions.values { try await session.dismiss(reason: .escape) }
    func compare(_ label: String, _ samples: [String: [UInt64]], target: String) {
        let (plain, encrypted) = (percentiles(samples["clear"]!), percentiles(samples["encrypted"]!))
        print("\(label): clear p50 \(milliseconds(plain.p50)), p99 \(milliseconds(plain.p99)); encrypted p50 \(milliseconds(encrypted.p50)), p99 \(milliseconds(encrypted.p99)); "
            + String(format: "ratio p50 %.2f×, p99 %.2f× over %d each  (target: %@)",
                Double(encrypted.p50) / Double(plain.p50), Double(encrypted.p99) / Double(plain.p99), samples["clear"]!.count, target))
    }
    compare("encryption: edit made durable (FormSession.set)", edits, target: "p99 <= 1.2x clear")
    compare("encryption: open a draft of a 200-field form (resumeDraft)", opens, target: "<= 1.2x clear")
    compare("encryption: list \(listed + 1) drafts streamed (forEachRecord)", lists, target: "<= 1.2x clear")
}

import DraftStore
import FieldSheetTesting
import Foundation

/// The encrypted device store against the same store in clear, in one sitting: one edit made durable, opening
/// a draft of a 200-field form, and listing 10,000 records. The two stores sit side by side in `directory` and
/// are measured in alternating rounds (which one goes first alternates too), so a change of load on the
/// machine falls on both alike; each figure is over all rounds, and the ratio is encrypted / clear.
///
/// `FIELDSHEET_BENCH_LIST_DRAFTS` sets how many one-field drafts each store gets (default 10,000): fewer to
/// profile the edit and the open alone without the set-up's cost.
func benchEncryption(in directory: URL) async throws {
    let listed = ProcessInfo.processInfo.environment["FIELDSHEET_BENCH_LIST_DRAFTS"].flatMap(Int.init) ?? 10_000
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
    for round in 0..<rounds {
        for (name, store) in round % 2 == 0 ? stores : stores.reversed() {
            let session = sessions[name]!
            for index in 0..<1_000 {
                let start = nanos()
                try await session.set("f\(index % 20)", to: .text("value \(round) \(index)"))
                edits[name, default: []].append(nanos() - start)
            }
            for _ in 0..<50 {
                let start = nanos()
                let opened = try await store.resumeDraft(drafts[name]!)
                opens[name, default: []].append(nanos() - start)
                try await opened.dismiss(reason: .escape)
            }
            for _ in 0..<2 {
                let start = nanos()
                try await store.forEachRecord(state: .draft) { _ in }
                lists[name, default: []].append(nanos() - start)
            }
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

import FieldSheetTesting
import Foundation
import FormModel
import GRDB
import Testing
@testable import DraftStore

/// A child process types edits into a record and is SIGKILLed at random moments, including during
/// `complete()`. After every kill: each edit it had been told was durable is there, nothing is
/// duplicated, the record's state is consistent, and SQLite's integrity check says ok.
struct CrashSafetyTests {
    static let driver = PackagePaths.debugProduct("fieldsheet-crashdriver")
    static let fieldCount = 20

    /// What the parent learned from the child's reports, across all runs.
    struct Ledger {
        var tried: [String: Set<Int>] = [:]
        var acked: [String: Int] = [:]
        var ackedSeqs = Set<Int>()
        var nextSeq = 0
        /// Once the record was seen submitted it must stay so (edits after submission keep the state).
        var submitted = false
        /// Completion started in the last run and its result was not reported.
        var completing = false

        mutating func read(_ line: String) {
            let parts = line.split(separator: " ")
            switch parts.first {
            case "T":
                let seq = Int(parts[1])!
                tried[String(parts[2]), default: []].insert(seq)
                nextSeq = max(nextSeq, seq + 1)
            case "A":
                let seq = Int(parts[1])!
                acked[String(parts[2])] = max(acked[String(parts[2])] ?? -1, seq)
                ackedSeqs.insert(seq)
            case "C":
                completing = true
            case "S":
                completing = false
                submitted = true
            default:
                break
            }
        }
    }

    @Test func everyAcknowledgedEditSurvivesSIGKILL() async throws {
        let home = TemporaryDirectory("crash")
        let setup = try DraftStore(home: home.url)
        try await setup.importForms([SampleForms.wideForm(id: "crash-form", fieldCount: Self.fieldCount, editableAfterSubmit: true)])
        let first = try await setup.newRecord(formID: "crash-form")
        // Something typed, so the record is kept (a new record left with nothing typed is not).
        try await first.set("f0", to: .text("s0"))
        try await first.dismiss(reason: .escape)
        let record = first.recordID

        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        var ledger = Ledger()
        ledger.read("T 0 f0")
        ledger.read("A 0 f0")
        var kills = 0
        var killsDuringComplete = 0
        let started = Date()
        while kills < 60 || killsDuringComplete < 5, Date().timeIntervalSince(started) < 40 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.driver)
            process.arguments = [home.path, record.uuidString.lowercased(), String(ledger.nextSeq), String(random.next() >> 1)]
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            let reader = LineReader(output.fileHandleForReading)
            ledger.completing = false
            let plan = random.next() % 10
            let deadline = Date().addingTimeInterval(10)
            var lines = 0
            if plan > 0 {
                // 0: kill at once (during open or recovery); 1…4: kill when completion starts; else after 1…40 reports.
                let limit = plan <= 4 ? 400 : Int(random.next() % 40) + 1
                while lines < limit, let line = await reader.next(deadline: deadline) {
                    ledger.read(line)
                    lines += 1
                    if plan <= 4, line == "C" { break }
                }
            }
            kill(process.processIdentifier, SIGKILL)
            await process.ended(within: 30)
            // Reports written before the kill but not read yet are still in the pipe: acknowledgements too.
            while let line = await reader.next(deadline: Date().addingTimeInterval(2)) { ledger.read(line) }
            let childErrors = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationReason == .uncaughtSignal, "the driver stopped by itself (seed \(seed)): \(childErrors)")
            kills += 1
            if ledger.completing { killsDuringComplete += 1 }
            try await verify(home: home, record: record, ledger: &ledger, seed: seed)
        }
        #expect(kills >= 50, "only \(kills) kills (seed \(seed))")
        #expect(killsDuringComplete >= 1, "no kill landed during complete() (seed \(seed))")
        #expect(ledger.ackedSeqs.count > 100, "too few acknowledged edits to prove anything (seed \(seed))")
    }

    func verify(home: TemporaryDirectory, record: UUID, ledger: inout Ledger, seed: UInt64) async throws {
        let store = try DraftStore(home: home.url)
        #expect(try await store.integrityCheck() == "ok", "seed \(seed)")
        #expect(try await store.openPresentations().isEmpty, "a killed presentation was not recovered (seed \(seed))")
        let all = try await store.records()
        #expect(all.map(\.id) == [record], "records duplicated or lost (seed \(seed))")
        let stored = try #require(try await store.record(record))
        for index in 0..<Self.fieldCount {
            let field = "f\(index)"
            let value = stored.answers[field]
            guard let acked = ledger.acked[field] else {
                if let value { #expect(ledger.tried[field]?.contains(Self.seq(value) ?? -1) == true, "\(field) holds \(value) nobody typed (seed \(seed))") }
                continue
            }
            let seq = try #require(value.flatMap(Self.seq), "acknowledged \(field)=s\(acked) is gone (seed \(seed))")
            #expect(seq >= acked, "\(field) went back from acknowledged s\(acked) to s\(seq) (seed \(seed))")
            #expect(ledger.tried[field]?.contains(seq) == true, "\(field)=s\(seq) was never typed (seed \(seed))")
        }
        switch stored.state {
        case .submitted: ledger.submitted = true
        case .draft: #expect(!ledger.submitted, "a submitted record went back to draft (seed \(seed))")
        case .deleted: Issue.record("the record was deleted (seed \(seed))")
        }
        let (duplicates, distinctClocks, setRows, values) = try await store.pool.read { db in
            let key = record.uuidString.lowercased()
            return (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM (SELECT fs_open(value, 'outbox', record_id, field_id) AS v FROM outbox WHERE record_id = ? AND kind = 'set' GROUP BY v HAVING count(*) > 1)", arguments: [key])!,
                try Int.fetchOne(db, sql: "SELECT count(DISTINCT hlc) = count(*) FROM outbox")!,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox WHERE record_id = ? AND kind = 'set'", arguments: [key])!,
                Set(try String.fetchAll(db, sql: "SELECT fs_open(value, 'outbox', record_id, field_id) FROM outbox WHERE record_id = ? AND kind = 'set'", arguments: [key]))
            )
        }
        #expect(duplicates == 0, "an edit was queued twice (seed \(seed))")
        #expect(distinctClocks == 1, "two changes share a clock reading (seed \(seed))")
        #expect(setRows >= ledger.ackedSeqs.count, "acknowledged edits missing from the outbox (seed \(seed))")
        let missing = ledger.ackedSeqs.filter { !values.contains(#"{"text":"s\#($0)"}"#) }
        #expect(missing.isEmpty, "acknowledged edits \(missing.sorted().prefix(5)) missing from the outbox (seed \(seed))")
    }

    static func seq(_ value: AnswerValue) -> Int? {
        guard case .text(let text) = value, text.hasPrefix("s") else { return nil }
        return Int(text.dropFirst())
    }
}

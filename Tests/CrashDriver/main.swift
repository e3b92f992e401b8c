// fieldsheet-crashdriver HOME RECORD|new START_SEQ SEED
//
// A child process for CrashSafetyTests: types edits into one record of the form `crash-form` and
// reports on standard output, one line per event, each written with a single write(2):
//   RECORD id            the record being edited (after its sheet opened)
//   T seq field          about to set field to "s<seq>"
//   A seq field          set returned: the edit is durable
//   C                    about to complete
//   S                    complete returned .submitted
// It never stops by itself (the test SIGKILLs it); it gives up after 100,000 edits.
import DraftStore
import FieldSheetTesting
import Foundation

func emit(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { buffer in _ = write(1, buffer.baseAddress, buffer.count) }
}

let arguments = CommandLine.arguments
guard arguments.count == 5, let start = Int(arguments[3]), let seed = UInt64(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: fieldsheet-crashdriver HOME RECORD|new START_SEQ SEED\n".utf8))
    exit(64)
}
var random = SplitMix64(seed: seed)
let fieldCount = 20

do {
    let store = try DraftStore(home: URL(fileURLWithPath: arguments[1]))
    func open() async throws -> FormSession {
        if arguments[2] == "new" { return try await store.newRecord(formID: "crash-form") }
        let id = UUID(uuidString: arguments[2])!
        return try await store.record(id)?.state == .submitted ? try await store.editSubmitted(id) : try await store.resumeDraft(id)
    }
    var session = try await open()
    let record = session.recordID
    emit("RECORD \(record.uuidString.lowercased())")
    var seq = start
    while seq < start + 100_000 {
        let field = "f\(random.next() % UInt64(fieldCount))"
        emit("T \(seq) \(field)")
        try await session.set(field, to: .text("s\(seq)"))
        emit("A \(seq) \(field)")
        seq += 1
        let roll = random.next() % 100
        if roll < 6 {
            emit("C")
            if try await session.complete() == .submitted { emit("S") }
            session = try await store.editSubmitted(record)
        } else if roll < 10 {
            try await session.dismiss(reason: .escape)
            session = try await store.record(record)?.state == .submitted ? try await store.editSubmitted(record) : try await store.resumeDraft(record)
        }
    }
} catch {
    FileHandle.standardError.write(Data("crashdriver: \(error)\n".utf8))
    exit(1)
}

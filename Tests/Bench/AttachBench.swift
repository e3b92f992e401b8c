import DraftStore
import FieldSheetTesting
import Foundation
import FormModel

/// Attaching a 10 MB photo on the device, until durable: `FormSession.attach` copies it into the home while
/// hashing it (SHA-256), fsyncs the copy, renames it under its hash, fsyncs the directory and commits the
/// answer with synchronous=FULL. Each run attaches a different photo (no deduplication), to a new record.
/// The floor beside it: writing the same bytes to a new file and fsyncing it, nothing else.
func benchAttach(in directory: URL, runs: Int = 20, size: Int = 10_000_000) async throws {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let store = try DraftStore(home: directory.appendingPathComponent("home"))
    try await store.importForms([SampleForms.damageReport()])
    var photos: [String] = []
    for run in 0..<runs {
        let path = directory.appendingPathComponent("photo-\(run).jpg").path
        SampleForms.writeRandomFile(path, size: size, seed: UInt64(1000 + run))
        photos.append(path)
    }
    // Read each source once so the first runs do not pay for a cold page cache the others do not.
    for path in photos { _ = FileManager.default.contents(atPath: path)?.count }

    var floor: [UInt64] = []
    for (run, path) in photos.enumerated() {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let target = directory.appendingPathComponent("floor-\(run)").path
        let start = nanos()
        let fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        fsync(fd)
        close(fd)
        floor.append(nanos() - start)
        unlink(target)
    }

    var samples: [UInt64] = []
    for path in photos {
        let session = try await store.newRecord(formID: "damage-report")
        let start = nanos()
        try await session.attach("photo", file: path)
        samples.append(nanos() - start)
        try await session.dismiss(reason: .escape)
    }
    let megabytes = Double(size) / 1_000_000
    report("floor: write \(Int(megabytes)) MB to a new file and fsync it", floor, target: "—")
    report("attach a \(Int(megabytes)) MB photo until durable (FormSession.attach)", samples, target: "—")
    let p50 = percentiles(samples).p50
    print(String(format: "  attach throughput at p50: %.0f MB/s (copy, SHA-256, fsync file and directory, commit)", megabytes / (Double(p50) / 1e9)))
    print(String(format: "  RSS after \(runs) attaches: %.1f MiB (the copy goes through a 1 MiB buffer)", residentMiB()))
}

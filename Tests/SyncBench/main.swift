// fieldsheet-syncbench [BIN_DIR]: device ↔ server on loopback, for `make bench`.
//
// Starts the release fieldsheet-server in a temporary directory, then runs each phase in a child process
// of its own (so each reports its own peak RSS):
//   push: 10,000 records × 20 fields queued on an empty device, pushed (records/s, peak RSS);
//   pull: 100,000 records (seeded straight into the server's database) pulled into an empty device;
//   attachments: 20 MB and 200 MB uploaded and downloaded, the server alone over a plain socket
//   (AttachmentBench.swift), then device ↔ server through the fieldsheet CLI, both sides' peak RSS
//   (DeviceAttachmentBench.swift);
//   entities: 100,000 entities of 10 properties into an empty device, a form whose choice lists them opened, then a sync after 10 changed (EntityBench.swift).
//   SYNCBENCH_ONLY=sync: the push and the pull phases alone (SYNCBENCH_PUSH, SYNCBENCH_PULL: their record counts).
//   SYNCBENCH_ONLY=sensitive: the push of 2,000 records with 0, 5 and 20 of the 20 fields sensitive (sealed
//   on the device to the project key, docs/sensitive-fields.md), device and server CPU per record.
// Each phase also reports the time spent waiting for the server, to separate the device's share.
import DraftStore
import FieldSheetTesting
import FormModel
import Foundation
import GRDB
import Logging
import SyncClient
import SyncCore

let fieldCount = 20
/// How many of the wide form's fields are sensitive (the first ones), from SYNCBENCH_SENSITIVE.
let sensitiveCount = Int(ProcessInfo.processInfo.environment["SYNCBENCH_SENSITIVE"] ?? "") ?? 0

/// Peak resident set size of this process, in MB (VmHWM).
func peakRSS() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

/// User plus system CPU seconds of a process so far, from /proc/PID/stat ("self" for this one, every thread).
func cpuSeconds(_ pid: String = "self") -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return 0 }
    // After "pid (comm)": utime is field 14 and stime field 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Wraps a transport and adds up the time spent waiting for responses.
final class TimedTransport: HTTPTransport, @unchecked Sendable {
    let inner: CurlTransport
    private let lock = NSLock()
    private var total: Double = 0
    private var bytes = 0
    init(_ inner: CurlTransport) { self.inner = inner }
    var waiting: Double { lock.withLock { total } }
    var received: Int { lock.withLock { bytes } }
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let start = Date()
        let response = try await inner.send(request)
        let elapsed = Date().timeIntervalSince(start)
        lock.withLock { total += elapsed; bytes += response.body.count }
        return response
    }
}

/// The wide form: `fieldCount` text fields, the first `sensitive` of them sensitive.
func formJSON(sensitive: Int = sensitiveCount) -> String {
    let fields = (1...fieldCount).map { #"{ "id": "f\#($0)", "kind": "text", "label": "Field \#($0)"\#($0 <= sensitive ? ", \"sensitive\": true" : "") }"# }.joined(separator: ",\n")
    return """
        { "id": "wide", "version": 1, "title": "Wide Record", "completionLabel": "Create",
          "pages": [ { "id": "main", "fields": [ \(fields) ] } ] }
        """
}

func value(_ record: Int, _ field: Int) -> String { "record \(record) field \(field) value" }

/// Queues `count` new records of the wide form on the device at `home`, as the outbox holds them. They are
/// written in clear into a store opened without encryption; the store the phase then opens with its default
/// key file seals them in place (the conversion a store written in clear gets), before the sync is timed.
func queueRecords(home: String, count: Int) async throws {
    let store = try DraftStore(home: URL(fileURLWithPath: home), options: DraftStore.Options(encryption: .none))
    try await store.importForms([try JSONDecoder().decode(FormModelForm.self, from: Data(formJSON().utf8))])
    let queue = try DatabaseQueue(path: store.path)
    try await queue.write { db in
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for index in 0..<count {
            let id = UUID().uuidString.lowercased()
            let answers = (1...fieldCount).map { #""f\#($0)":{"text":"\#(value(index, $0))"}"# }.joined(separator: ",")
            try db.execute(sql: "INSERT INTO records (id, form_id, form_version, state, created_at, updated_at, fields) VALUES (?, 'wide', 1, 'submitted', ?, ?, ?)",
                arguments: [id, now, now, #"{"values":{},"writers":[]}"#])
            // The unsent edits, one row per field (device migration v6).
            for field in 1...fieldCount {
                try db.execute(sql: "INSERT INTO record_edits (record_id, key, value) VALUES (?, ?, ?)",
                    arguments: [id, "f\(field)", #"{"text":"\#(value(index, field))"}"#])
            }
            try db.execute(sql: "INSERT INTO outbox (record_id, kind, form_id, form_version, value, base_revision, hlc, created_at) VALUES (?, 'create', 'wide', 1, ?, 0, ?, ?)",
                arguments: [id, "{" + answers + "}", now << 16, now])
        }
    }
}

/// Seeds `count` records straight into the server's database (the server is not running).
func seedServer(data: String, count: Int) throws {
    let queue = try DatabaseQueue(path: (data as NSString).appendingPathComponent("fieldsheet.sqlite"))
    try queue.write { db in
        let project = try Int64.fetchOne(db, sql: "SELECT id FROM projects WHERE name = 'bench'")!
        let author = try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE name = 'seed'")!
        let start = try Int64.fetchOne(db, sql: "SELECT last_sequence FROM projects WHERE id = ?", arguments: [project])!
        let hlc = Int64(Date().timeIntervalSince1970 * 1000) << 16
        let statement = try db.makeStatement(sql: """
            INSERT INTO records (project_id, id, form_id, form_version, state, author_id, shared, revision, sequence, fields, updated_at)
            VALUES (?, ?, 'wide', 1, 'submitted', ?, 1, 1, ?, ?, ?)
            """)
        for index in 0..<count {
            let values = (1...fieldCount).map { #""f\#($0)":{"text":"\#(value(index, $0))"}"# }.joined(separator: ",")
            let fields = #"{"values":{\#(values)},"writers":["seed-device"],"stamp":{"revision":1,"clock":\#(hlc),"writer":0}}"#
            try statement.execute(arguments: [project, UUID().uuidString.lowercased(), author, start + Int64(index) + 1, fields, Date().timeIntervalSince1970])
        }
        try db.execute(sql: "UPDATE projects SET last_sequence = ? WHERE id = ?", arguments: [start + Int64(count), project])
    }
}

/// One phase in this process: sync the device at `home` and print a result line.
func runPhase(_ phase: String, home: String, url: String, token: String, count: Int) async throws {
    if phase == "push" { try await queueRecords(home: home, count: count) }
    // The default store, encrypted with the key file in its home; the queued records are sealed here, in large batches.
    let store = try DraftStore(home: URL(fileURLWithPath: home), options: DraftStore.Options(encryptionBatchSize: 50_000))
    var configuration = SyncConfiguration(serverURL: url, project: "bench", token: token)
    configuration.pushBatchSize = 500
    configuration.pullPageSize = 1_000
    var logger = Logger(label: "syncbench")
    logger.logLevel = .critical
    let transport = TimedTransport(CurlTransport())
    let engine = SyncEngine(store: store, transport: transport, configuration: configuration, logger: logger)
    let timer = PhaseTimer()
    for try await event in engine.events() { timer.note(event.phase, waiting: transport.waiting) }
    let measured: SyncPhase = phase == "push" ? .pushing : .pulling
    let seconds = timer.seconds(measured)
    let waiting = timer.waiting(measured)
    print("\(phase) " + String(format: "%d records × %d fields: %.2f s, %.0f records/s end to end; %.2f s of it waiting for the server, %.2f s on the device (%.0f records/s device side); device CPU %.0f µs/record; peak RSS %.1f MB",
        count, fieldCount, seconds, Double(count) / seconds, waiting, seconds - waiting, Double(count) / max(0.001, seconds - waiting),
        timer.cpu(measured) / Double(count) * 1e6, peakRSS()))
}

/// Seconds spent in each phase (the first time the phase is entered to the next phase change).
final class PhaseTimer {
    private var current: SyncPhase?
    private var since = Date()
    private let started = Date()
    private var spent: [SyncPhase: Double] = [:]
    private var waited: [SyncPhase: Double] = [:]
    private var waitingSince = 0.0
    private var used: [SyncPhase: Double] = [:]
    private var cpuSince = 0.0
    func note(_ phase: SyncPhase, waiting: Double) {
        guard phase != current else { return }
        let cpu = cpuSeconds()
        if let current {
            // Only the first stretch of a phase counts (the final pull after a push is not the push's).
            if spent[current] == nil {
                spent[current] = Date().timeIntervalSince(since)
                waited[current] = waiting - waitingSince
                used[current] = cpu - cpuSince
            }
        }
        current = phase
        since = Date()
        waitingSince = waiting
        cpuSince = cpu
    }
    /// CPU seconds this process used in the phase's first stretch.
    func cpu(_ phase: SyncPhase) -> Double { used[phase] ?? 0 }
    func seconds(_ phase: SyncPhase) -> Double { spent[phase] ?? 0 }
    func waiting(_ phase: SyncPhase) -> Double { waited[phase] ?? 0 }
    var total: Double { Date().timeIntervalSince(started) }
}

typealias FormModelForm = FormDefinition

let arguments = CommandLine.arguments
if arguments.count == 6 {
    // Child: PHASE HOME URL TOKEN COUNT
    try await runPhase(arguments[1], home: arguments[2], url: arguments[3], token: arguments[4], count: Int(arguments[5])!)
    exit(0)
}
let bin = arguments.count > 1 ? arguments[1] : ".build/release"
if ProcessInfo.processInfo.environment["SYNCBENCH_ONLY"] == "attachments" {
    try await runAttachmentBench(bin: bin)
    try await runDeviceAttachmentBench(bin: bin)
    exit(0)
}
if ProcessInfo.processInfo.environment["SYNCBENCH_ONLY"] == "entities" {
    try await runEntityBench(bin: bin)
    exit(0)
}
if ProcessInfo.processInfo.environment["SYNCBENCH_ONLY"] == "sensitive" {
    // The same push with none, a quarter and all of the fields sealed: one server (and project key) per run.
    let count = Int(ProcessInfo.processInfo.environment["SYNCBENCH_PUSH"] ?? "") ?? 2_000
    print("Push with sensitive fields (\(bin), embedded SQLite):")
    for sealed in [0, 5, 20] {
        let server = ServerProcess(binary: "\(bin)/fieldsheet-server")
        try await server.createProject("bench")
        let token = try await server.addUser("bench", project: "bench", role: "collector")
        let keys = TemporaryDirectory("syncbench-keys")
        try await server.admin(["project", "key", "create", "bench", "--out", keys.file("bench.key")])
        try await server.publish(json: formJSON(sensitive: sealed), project: "bench")
        try await server.start(port: 0)
        let home = TemporaryDirectory("syncbench-sensitive")
        let serverPid = server.processIdentifier.map(String.init) ?? "0"
        let serverCPU = cpuSeconds(serverPid)
        let result = try await Subprocess.run(arguments[0], ["push", home.path, server.url, token, String(count)], environment: ["SYNCBENCH_SENSITIVE": String(sealed)], timeout: 1_200)
        print("\(sealed) of \(fieldCount) sensitive: " + result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            + String(format: "; server CPU %.0f µs/record (the whole child run)", (cpuSeconds(serverPid) - serverCPU) / Double(count) * 1e6))
        if result.status != 0 { print(result.stderr) }
        await server.stop()
    }
    exit(0)
}
if ProcessInfo.processInfo.environment["SYNCBENCH_ONLY"] == "device-attachments" {
    try await runDeviceAttachmentBench(bin: bin)
    exit(0)
}
let pushCount = Int(ProcessInfo.processInfo.environment["SYNCBENCH_PUSH"] ?? "") ?? 10_000
let pullCount = Int(ProcessInfo.processInfo.environment["SYNCBENCH_PULL"] ?? "") ?? 100_000
let server = ServerProcess(binary: "\(bin)/fieldsheet-server")
try await server.createProject("bench")
let token = try await server.addUser("bench", project: "bench", role: "collector")
let seedToken = try await server.addUser("seed", project: "bench", role: "collector")
try await server.publish(json: formJSON(), project: "bench")
print("Device sync on loopback (release fieldsheet-server, embedded SQLite):")
try seedServer(data: server.dataDirectory, count: pullCount)
try await server.start(port: 0)
for (phase, count, user) in [("push", pushCount, token), ("pull", pullCount, seedToken)] {
    let home = TemporaryDirectory("syncbench-\(phase)")
    let serverPid = server.processIdentifier.map(String.init) ?? "0"
    let serverCPU = cpuSeconds(serverPid)
    let result = try await Subprocess.run(arguments[0], [phase, home.path, server.url, user, String(count)], timeout: 1_200)
    print(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        + String(format: "; server CPU %.0f µs/record (the whole child run)", (cpuSeconds(serverPid) - serverCPU) / Double(count) * 1e6))
    if result.status != 0 { print(result.stderr) }
}
await server.stop()
// SYNCBENCH_ONLY=sync: the push and the pull alone.
if ProcessInfo.processInfo.environment["SYNCBENCH_ONLY"] == "sync" { exit(0) }
try await runAttachmentBench(bin: bin)
try await runDeviceAttachmentBench(bin: bin)
try await runEntityBench(bin: bin)

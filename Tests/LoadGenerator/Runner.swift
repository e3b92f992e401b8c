import AsyncHTTPClient
import Foundation
import FormModel
import NIOCore
import NIOHTTP1
import SyncCore

/// The scenarios. Request bodies are encoded before the clock starts, so the figures are the server's.
struct Runner: Sendable {
    let setup: Setup
    let client: HTTPClient
    static let batchSize = 500
    static let fields = 20

    /// One push body of `count` new submitted records from `clientId`, signed with `signingKey` when one is
    /// given: once over the push's manifest (`pushSignature`, as a device signs), or with `perMutation` each
    /// mutation (`signatures`, as older devices sign).
    func pushBody(clientID: String, count: Int, signingKey: DeviceSigningKey? = nil, perMutation: Bool = false) throws -> ByteBuffer {
        let hlc = HybridTimestamp(millis: HybridLogicalClock.wallMillis(), counter: 0)
        var changes: [String: FieldChange] = [:]
        for field in 1...Self.fields { changes["f\(field)"] = FieldChange(value: .text("value of field \(field) typed in the basement"), baseRevision: 0, hlc: hlc) }
        let mutations = (0..<count).map { _ in
            Mutation(mutationID: UUID().uuidString, recordID: UUID(), form: FormKey(id: "wide", version: 1), state: .submitted, changes: changes)
        }
        return Self.body(clientID: clientID, mutations, signingKey: signingKey, perMutation: perMutation)
    }

    /// A push body as a device writes it (``PushRequest/deviceBytes(clientID:_:signingKey:perMutation:)``).
    static func body(clientID: String, _ mutations: [Mutation], signingKey: DeviceSigningKey? = nil, perMutation: Bool = false) -> ByteBuffer {
        ByteBuffer(bytes: PushRequest.deviceBytes(clientID: clientID, mutations, signingKey: signingKey, perMutation: perMutation))
    }

    /// How a round's pushes are signed.
    enum Signing: CaseIterable {
        case unsigned, perMutation, perPush

        var label: String {
            switch self {
            case .unsigned: "unsigned"
            case .perMutation: "signed per mutation"
            case .perPush: "signed per push"
            }
        }
    }

    /// The cost of signature verification: `rounds` rounds, each pushing `records` records (batches of
    /// `batchSize`) unsigned with `setup.token`, and the same signed with `signedToken`, whose device registers a
    /// signing key first: once signed per mutation, as older devices sign (the server verifies each mutation),
    /// once signed per push, as devices sign now (the server verifies one signature per push over the digests
    /// it takes anyway). Prints the server's CPU per record of each, summed over the rounds; alternating keeps
    /// drift in the machine's load out of the ratios.
    func signedPush(signedToken: String, records: Int, rounds: Int) async throws {
        let key = DeviceSigningKey()
        var register = ByteBuffer()
        register.writeString(#"{"publicKey":"\#(key.publicKey)"}"#)
        _ = try await send(.POST, "/v1/projects/bench/device-key", body: register, token: signedToken, expecting: .noContent)
        var cpu: [Signing: Double] = [:]
        for round in 0..<rounds {
            for signing in Signing.allCases {
                let bodies = try (0..<(records / Self.batchSize)).map { _ in
                    try pushBody(
                        clientID: "bench-\(signing)", count: Self.batchSize, signingKey: signing == .unsigned ? nil : key,
                        perMutation: signing == .perMutation)
                }
                let before = serverCPUSeconds()
                for (index, body) in bodies.enumerated() {
                    _ = try await send(.POST, "/v1/projects/bench/push", body: body, instance: index, token: signing == .unsigned ? nil : signedToken)
                }
                let used = serverCPUSeconds() - before
                cpu[signing, default: 0] += used
                print(String(format: "round %d, %@: %.0f µs/record", round + 1, signing.label, used / Double(records) * 1e6))
            }
        }
        let total = Double(records * rounds)
        let unsigned = max(cpu[.unsigned] ?? 0, 1e-9)
        print(String(format: "unsigned: %.1f µs/record; signed per mutation: %.1f µs/record, ratio %.3f; signed per push: %.1f µs/record, ratio %.3f (%d records each, %d rounds, batches of %d)",
                     unsigned / total * 1e6, (cpu[.perMutation] ?? 0) / total * 1e6, (cpu[.perMutation] ?? 0) / unsigned,
                     (cpu[.perPush] ?? 0) / total * 1e6, (cpu[.perPush] ?? 0) / unsigned, records * rounds, rounds, Self.batchSize))
    }

    /// The fields of the form `long` (published by bench.sh): 250 questions, in turn text, integer and single
    /// choice (`q1`…`q250`; choices `a`…`e`).
    static let longFields = 250

    /// Whether each answer of a crowd submission carries its own clock, as a person answering one question
    /// after another gives it (`LOADGEN_CLOCK_PER_ANSWER=1`); by default all share one, as in earlier figures.
    static let clockPerAnswer = ProcessInfo.processInfo.environment["LOADGEN_CLOCK_PER_ANSWER"] == "1"

    /// One push body: one new submitted record of the form `long`, every question answered.
    func longSubmission(clientID: String) throws -> ByteBuffer {
        let now = HybridLogicalClock.wallMillis()
        var changes: [String: FieldChange] = [:]
        for question in 1...Self.longFields {
            let value: AnswerValue = switch question % 3 {
            case 1: .text("answer \(question), as typed at the door")
            case 2: .integer(question * 7)
            default: .choice(["a", "b", "c", "d", "e"][question % 5])
            }
            // One answer every two seconds, the last one now.
            let millis = Self.clockPerAnswer ? now - Int64(Self.longFields - question) * 2_000 : now
            changes["q\(question)"] = FieldChange(value: value, baseRevision: 0, hlc: HybridTimestamp(millis: millis, counter: 0))
        }
        let mutation = Mutation(
            mutationID: UUID().uuidString, recordID: UUID(), form: FormKey(id: "long", version: 1), state: .submitted, changes: changes,
            times: RecordTimes(created: Date(), updated: Date(), submitted: Date()))
        return Self.body(clientID: clientID, [mutation])
    }

    /// `crowd` devices at once, each sending one 250-question submission: what a field team's server does at
    /// the end of a day. Submissions/s, p50/p99, and the server's CPU per field written.
    func crowd() async throws {
        guard setup.crowd > 0 else { return }
        let bodies = try (0..<setup.crowd).map { device in try longSubmission(clientID: "bench-crowd-\(device)") }
        let cpu = serverCPUSeconds()
        let start = ContinuousClock.now
        let results = await withTaskGroup(of: (Duration?, Int).self) { group in
            for device in 0..<setup.crowd {
                group.addTask {
                    do {
                        return (try await send(.POST, "/v1/projects/bench/push", body: bodies[device], instance: device).0, 0)
                    } catch {
                        FileHandle.standardError.write(Data("device \(device): \(error)\n".utf8))
                        return (nil, 1)
                    }
                }
            }
            var all: [(Duration?, Int)] = []
            for await result in group { all.append(result) }
            return all
        }
        let total = start.duration(to: .now)
        let latencies = results.compactMap(\.0)
        report(
            "\(setup.crowd) devices at once, one \(Self.longFields)-question submission each", latencies, total: total, units: latencies.count,
            unit: "submissions/s", errors: results.map(\.1).reduce(0, +), cpuBefore: cpu, perField: Self.longFields)
    }

    /// Sends one request; returns its latency, or throws when the status is not 200.
    func send(
        _ method: HTTPMethod, _ path: String, body: ByteBuffer? = nil, instance: Int = 0, token: String? = nil, expecting: HTTPResponseStatus = .ok
    ) async throws -> (Duration, ByteBuffer) {
        var request = HTTPClientRequest(url: setup.urls[instance % setup.urls.count] + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token ?? setup.token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        if let body { request.body = .bytes(body) }
        let start = ContinuousClock.now
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        let elapsed = start.duration(to: .now)
        guard response.status == expecting else { throw LoadError("\(method) \(path) answered \(response.status): \(String(buffer: bytes).prefix(300))") }
        return (elapsed, bytes)
    }

    /// Push `pushRecords` records of 20 fields from one device, `batchSize` per request, one after another.
    func push() async throws {
        let bodies = try (0..<(setup.pushRecords / Self.batchSize)).map { _ in try pushBody(clientID: "bench-push", count: Self.batchSize) }
        var latencies: [Duration] = []
        let cpu = serverCPUSeconds()
        let start = ContinuousClock.now
        for (index, body) in bodies.enumerated() { latencies.append(try await send(.POST, "/v1/projects/bench/push", body: body, instance: index).0) }
        let total = start.duration(to: .now)
        report("push \(setup.pushRecords) records × 20 fields (batches of \(Self.batchSize), 1 device)", latencies, total: total, units: setup.pushRecords, unit: "records/s", cpuBefore: cpu)
    }

    /// Tops the project up to `pullRecords` records for the pull scenario (not measured).
    func fill() async throws {
        let missing = setup.pullRecords - setup.pushRecords
        guard missing > 0 else { return }
        for index in 0..<(missing / Self.batchSize) {
            _ = try await send(.POST, "/v1/projects/bench/push", body: try pushBody(clientID: "bench-fill", count: Self.batchSize), instance: index)
        }
    }

    /// Pull every record into an empty device, 1,000 per page.
    func pull() async throws {
        var latencies: [Duration] = []
        var cursor: Int64 = 0
        var received = 0
        var wireBytes = 0
        let cpu = serverCPUSeconds()
        let start = ContinuousClock.now
        while true {
            let (elapsed, bytes) = try await send(.GET, "/v1/projects/bench/changes?after=\(cursor)&limit=1000", instance: latencies.count)
            latencies.append(elapsed)
            wireBytes += bytes.readableBytes
            // Read as a device does: every record's envelope, its fields kept as bytes.
            let end = try PullPageReader.read(Array(bytes.readableBytesView)) { _ in }
            received += end.count
            cursor = end.cursor
            if !end.hasMore { break }
        }
        let total = start.duration(to: .now)
        report("pull \(received) records (pages of 1,000, read by the client)", latencies, total: total, units: received, unit: "records/s", cpuBefore: cpu)
        print(String(format: "  bytes on the wire per pulled record: %.0f", Double(wireBytes) / Double(max(1, received))))
    }

    /// `devices` devices, each: push 10 records, pull one page of 100, three rounds; all at once, or each on its
    /// own schedule (`Setup.devicePeriodMillis`).
    func devices() async throws {
        let rounds = 3
        let period = Duration.milliseconds(setup.devicePeriodMillis)
        let bodies = try (0..<setup.devices).map { device in try (0..<rounds).map { _ in try pushBody(clientID: "bench-device-\(device)", count: 10) } }
        let cpu = serverCPUSeconds()
        let start = ContinuousClock.now
        let results = await withTaskGroup(of: ([Duration], Int).self) { group in
            for device in 0..<setup.devices {
                group.addTask {
                    var latencies: [Duration] = []
                    var errors = 0
                    var cursor: Int64 = 0
                    for round in 0..<rounds {
                        if period > .zero {
                            let due = start + period * device / setup.devices + period * round
                            try? await Task.sleep(until: due, clock: .continuous)
                        }
                        do {
                            latencies.append(try await send(.POST, "/v1/projects/bench/push", body: bodies[device][round], instance: device).0)
                            let (elapsed, bytes) = try await send(.GET, "/v1/projects/bench/changes?after=\(cursor)&limit=100", instance: device)
                            latencies.append(elapsed)
                            cursor = (try? PullPageReader.read(Array(bytes.readableBytesView)) { _ in }.cursor) ?? cursor
                        } catch {
                            errors += 1
                            FileHandle.standardError.write(Data("device \(device): \(error)\n".utf8))
                        }
                    }
                    return (latencies, errors)
                }
            }
            var all: [([Duration], Int)] = []
            for await result in group { all.append(result) }
            return all
        }
        let total = start.duration(to: .now)
        let latencies = results.flatMap(\.0)
        let name = period > .zero
            ? "\(setup.devices) devices, each pushing every \(setup.devicePeriodMillis) ms (3 × push 10 + pull 100 each)"
            : "\(setup.devices) devices at once (3 × push 10 + pull 100 each)"
        report(name, latencies, total: total, units: latencies.count, unit: "requests/s", errors: results.map(\.1).reduce(0, +), cpuBefore: cpu)
    }

    func report(_ name: String, _ latencies: [Duration], total: Duration, units: Int, unit: String, errors: Int = 0, cpuBefore: Double, perField: Int? = nil) {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> String {
            guard !sorted.isEmpty else { return "-" }
            let value = sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
            return String(format: "%.1f ms", Double(value.components.attoseconds) / 1e15 + Double(value.components.seconds) * 1000)
        }
        let seconds = Double(total.components.seconds) + Double(total.components.attoseconds) / 1e18
        let cpu = (serverCPUSeconds() - cpuBefore) / Double(max(1, units)) * 1e6
        var perUnit = String(format: "%.0f µs/%@", cpu, unit.hasPrefix("records") ? "record" : unit.hasPrefix("submissions") ? "submission" : "request")
        if let perField { perUnit += String(format: " (%.1f µs/field)", cpu / Double(perField)) }
        print("| \(name) | \(latencies.count) | \(Int(Double(units) / seconds)) \(unit) | \(percentile(0.5)) | \(percentile(0.99)) | \(errors) | \(perUnit) | \(rss()) |")
    }

    /// User plus system CPU time of every server instance so far, from /proc/PID/stat (in clock ticks).
    /// A PostgreSQL backend's own processes are not included.
    func serverCPUSeconds() -> Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return setup.serverPids.reduce(0) { total, pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")")
            else { return total }
            // After "pid (comm)": state is field 3, utime field 14 and stime field 15.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return total }
            return total + (user + system) / ticks
        }
    }

    /// The server's resident set now and at its peak, from /proc.
    func rss() -> String {
        guard let status = try? String(contentsOfFile: "/proc/\(setup.serverPid)/status", encoding: .utf8) else { return "?" }
        func value(_ key: String) -> String {
            status.split(separator: "\n").first { $0.hasPrefix(key) }.map { line in
                let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
                return "\(kb / 1024) MB"
            } ?? "?"
        }
        return "\(value("VmRSS:")) (\(value("VmHWM:")))"
    }
}

struct LoadError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

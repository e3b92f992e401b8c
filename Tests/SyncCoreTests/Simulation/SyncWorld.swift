import Foundation
import FormModel
@testable import SyncCore

/// Two devices and one server, driven by one seed through a random interleaving of edits, pushes (some
/// requests lost, some responses lost), outcomes and pulls, then a quiescent round. Records every step
/// (the trace of a failing seed) and every broken promise (`violations`).
struct SyncWorld {
    /// The fields of the simulated form and the policy each one merges by.
    static let policies: [String: ConflictPolicy] = ["f0": .lastWriterWins, "f1": .lastWriterWins, "f2": .serverWins, "f3": .clientWins, "f4": .manual]
    static let fields = policies.keys.sorted()

    var random: Random
    var now: Int64 = 1_800_000_000_000
    var devices: [SimulatedDevice]
    var server = SimulatedServer(policies: SyncWorld.policies)
    var trace: [String] = []
    var violations: [String] = []
    /// Every value typed, as "record field value", and the values that are accounted for although not
    /// current: replaced by the same device before it was sent, overwritten by a device that had seen it.
    var typed: Set<String> = []
    var accounted: Set<String> = []
    /// For each frozen mutation and field: what the device showed when it first edited the field.
    var seen: [String: FieldValues] = [:]
    /// Which mutation carried each outbox row ("device row").
    var carriers: [String: String] = [:]
    var rowsOfMutation: [String: [String]] = [:]
    var typedCount = 0

    init(seed: UInt64) {
        random = Random(seed)
        devices = [SimulatedDevice(id: "device-a", skewMillis: 0), SimulatedDevice(id: "device-b", skewMillis: Int64(random.int(-40...40)))]
    }

    static func key(_ record: UUID, _ field: String, _ value: AnswerValue) -> String {
        "\(record.uuidString.prefix(4)) \(field) \(value.display())"
    }

    // MARK: Steps

    mutating func run(steps: Int) {
        for device in devices.indices { create(device) }
        for _ in 0..<steps {
            now += Int64(random.int(0...3))
            let device = random.int(0...1)
            switch random.int(0...99) {
            case 0..<45: edit(device)
            case 45..<60: push(device, fate: [.delivered, .delivered, .responseLost, .requestLost][random.int(0...3)])
            case 60..<75: deliver(device)
            case 75..<78: create(device)
            default: pull(device, pages: random.int(1...2))
            }
        }
        quiesce()
        check()
    }

    mutating func create(_ device: Int) {
        let record = UUID(uuid: (UInt8(device), UInt8(devices[device].records.count), 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, UInt8(truncatingIfNeeded: random.next())))
        let value = newValue(device)
        devices[device].create(record, defaults: ["f0": value], now: now)
        typed.insert(Self.key(record, "f0", value))
        trace.append("\(devices[device].id) creates \(record.uuidString.prefix(4)) with f0 = \(value.display())")
    }

    mutating func newValue(_ device: Int) -> AnswerValue {
        typedCount += 1
        return .text("\(device == 0 ? "a" : "b")\(typedCount)")
    }

    mutating func edit(_ device: Int) {
        let records = devices[device].records.filter { $0.value.state != .deleted }.keys.sorted { $0.uuidString < $1.uuidString }
        guard !records.isEmpty else { return }
        let record = records[random.int(0...(records.count - 1))]
        let field = Self.fields[random.int(0...(Self.fields.count - 1))]
        var value: AnswerValue?
        switch random.int(0...9) {
        case 0, 1: value = nil
        case 2:
            // What the other side holds: the merge's "both wrote the same value" path.
            value = server.records[record]?.record.fields[field]?.value ?? devices[1 - device].records[record]?.answers[field] ?? newValue(device)
        default: value = newValue(device)
        }
        if let value { typed.insert(Self.key(record, field, value)) }
        devices[device].edit(record, field: field, to: value, now: now)
        trace.append("\(devices[device].id) sets \(record.uuidString.prefix(4)).\(field) = \(value?.display() ?? "cleared")")
    }

    enum Fate: String { case delivered, responseLost = "response lost", requestLost = "request lost" }

    mutating func push(_ device: Int, fate: Fate, limit: Int = 2) {
        var frozenRows: [(Mutation, [SimulatedDevice.OutboxRow])] = []
        let batch = devices[device].prepareOutgoing(limit: limit) { frozenRows.append(($0, $1)) }
        for (mutation, rows) in frozenRows { froze(mutation, rows: rows, device: device) }
        guard !batch.isEmpty else { return }
        trace.append("\(devices[device].id) pushes \(batch.map { "\($0.mutationID)\(Self.describe($0.changes))" }.joined(separator: ", ")): \(fate.rawValue)")
        guard fate != .requestLost else { return }
        var effects: [SimulatedServer.FieldEffect] = []
        let response = server.push(clientID: devices[device].id, batch, now: now) { effects.append($0) }
        for effect in effects { merged(effect) }
        if fate == .delivered { devices[device].responses.append(response) }
    }

    static func describe(_ changes: [String: FieldChange]) -> String {
        " {" + changes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.value?.display() ?? "nil")@\($0.value.baseRevision)" }.joined(separator: " ") + "}"
    }

    mutating func deliver(_ device: Int) {
        guard !devices[device].responses.isEmpty else { return }
        let response = devices[device].responses.removeFirst()
        trace.append("\(devices[device].id) gets outcomes \(response.outcomes.map { "\($0.mutationID) \($0.status.rawValue) r\($0.revision ?? -1)\($0.changed == false ? " unchanged" : "")" }.joined(separator: ", "))")
        devices[device].applyResponse(response, now: now)
    }

    mutating func pull(_ device: Int, pages: Int) {
        for _ in 0..<pages {
            let bytes = server.page(after: devices[device].cursor, limit: 2, now: now)
            trace.append("\(devices[device].id) pulls after \(devices[device].cursor)")
            do {
                guard try devices[device].applyPullPage(bytes, now: now) else { return }
            } catch {
                violations.append("a pull page did not read back: \(error)")
                return
            }
        }
    }

    /// Every response still on its way arrives (or is lost), each device pushes everything it holds, and
    /// both pull until the feed has nothing new.
    mutating func quiesce() {
        trace.append("— quiescent round —")
        for device in devices.indices {
            while !devices[device].responses.isEmpty {
                if random.bool() { deliver(device) } else { devices[device].responses.removeFirst() }
            }
        }
        for device in devices.indices {
            var rounds = 0
            while !devices[device].outbox.isEmpty || !devices[device].sent.isEmpty {
                push(device, fate: .delivered)
                deliver(device)
                rounds += 1
                if rounds > 100 {
                    violations.append("\(devices[device].id) still has unsent changes after 100 pushes")
                    break
                }
            }
        }
        for device in devices.indices {
            pull(device, pages: 1000)
        }
    }

    // MARK: Checks

    /// A frozen mutation must carry each field's latest edit; earlier edits of the same field were replaced
    /// by the device itself. No row may be carried by two mutations.
    mutating func froze(_ mutation: Mutation, rows: [SimulatedDevice.OutboxRow], device: Int) {
        var firstSeen: FieldValues = [:]
        for (field, change) in mutation.changes {
            let edits = rows.filter { $0.values.keys.contains(field) }
            guard let latest = edits.last, let value = latest.values[field] else {
                violations.append("\(mutation.mutationID) sends \(field) that no outbox row wrote")
                continue
            }
            if value != change.value {
                violations.append("\(mutation.mutationID) sends \(field) = \(change.value?.display() ?? "nil") but the device's last edit was \(value?.display() ?? "nil"): that edit is lost")
            }
            for earlier in edits.dropLast() {
                if let replaced = earlier.values[field] ?? nil { accounted.insert(Self.key(mutation.recordID, field, replaced)) }
            }
            firstSeen[field] = edits.first?.seen[field] ?? nil
        }
        seen[mutation.mutationID] = firstSeen
        for row in rows {
            let key = "\(devices[device].id) \(row.id)"
            if let earlier = carriers[key] {
                violations.append("outbox row \(key) is carried by \(earlier) and again by \(mutation.mutationID)")
            }
            carriers[key] = mutation.mutationID
        }
    }

    /// What the server's merge did to one field: a value it replaced without logging a conflict must be one
    /// the writing device had seen (it typed over it knowingly).
    mutating func merged(_ effect: SimulatedServer.FieldEffect) {
        if let conflict = effect.conflict {
            for side in [conflict.server?.value, conflict.client?.value].compactMap({ $0 }) {
                accounted.insert(Self.key(effect.record, effect.field, side))
            }
            // The field's policy decided, and the record holds the winner.
            var expected = ConflictEntry.Winner.server
            switch conflict.policy {
            case .lastWriterWins:
                if let server = conflict.server, (effect.change.hlc, effect.clientID) > (server.hlc, server.clientID) { expected = .client }
            case .clientWins: expected = .client
            case .serverWins, .manual: expected = .server
            }
            let held = expected == .client ? effect.change.value : effect.before?.value
            if conflict.policy != Self.policies[effect.field] || conflict.winner != expected || effect.after?.value != held || conflict.open != (conflict.policy == .manual) {
                violations.append("\(effect.mutationID): the conflict on \(effect.field) was decided for the \(conflict.winner) under \(conflict.policy), the record holds \(effect.after?.value?.display() ?? "nothing")")
            }
            return
        }
        guard let before = effect.before?.value, effect.after?.value != before else { return }
        let seenValue = seen[effect.mutationID]?[effect.field] ?? nil
        if seenValue == before || effect.before?.clientID == effect.clientID {
            accounted.insert(Self.key(effect.record, effect.field, before))
        } else {
            violations.append(
                "\(effect.mutationID) replaced \(effect.field) = \(before.display()) (revision \(effect.before?.revision ?? 0)) with \(effect.change.value?.display() ?? "nil") (base \(effect.change.baseRevision)) without a conflict, but the device never saw it (it saw \(seenValue?.display() ?? "nothing"))")
        }
    }

    mutating func check() {
        // (1) Both devices and the server show the same answers, and nothing is left to send.
        for (id, stored) in server.records {
            let values = stored.record.fields.values
            for device in devices {
                guard let record = device.records[id] else {
                    violations.append("\(device.id) never got \(id.uuidString.prefix(4))")
                    continue
                }
                if record.answers != values {
                    violations.append("\(device.id) shows \(id.uuidString.prefix(4)) as \(Self.describe(record.answers)), the server as \(Self.describe(values))")
                }
                if record.state != stored.record.state { violations.append("\(device.id) holds \(id.uuidString.prefix(4)) as \(record.state), the server as \(stored.record.state)") }
                if !record.local.isEmpty { violations.append("\(device.id) still has local edits of \(id.uuidString.prefix(4)): \(record.local)") }
                if record.serverRevision != stored.record.revision {
                    violations.append("\(device.id) holds \(id.uuidString.prefix(4)) at revision \(record.serverRevision), the server at \(stored.record.revision)")
                }
            }
            // (3) Each change applied once: the revision counts the merges that changed the record.
            if stored.record.revision != server.changingMerges[id] ?? 0 {
                violations.append("\(id.uuidString.prefix(4)) is at revision \(stored.record.revision) after \(server.changingMerges[id] ?? 0) changing merges")
            }
        }
        for device in devices where device.records.count != server.records.count {
            violations.append("\(device.id) holds \(device.records.count) records, the server \(server.records.count)")
        }
        for (key, count) in server.merges where count > 1 { violations.append("\(key) was merged \(count) times") }
        // (2) No value lost: each typed value is current, in the conflict log, or knowingly replaced.
        var current = Set<String>()
        for (id, stored) in server.records {
            for (field, value) in stored.record.fields.values { current.insert(Self.key(id, field, value)) }
        }
        for value in typed.sorted() where !current.contains(value) && !accounted.contains(value) {
            violations.append("the typed value \(value) is lost: not current, not in the conflict log, not replaced by anyone who saw it")
        }
    }

    static func describe(_ values: [String: AnswerValue]) -> String {
        "{" + values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.display())" }.joined(separator: " ") + "}"
    }
}

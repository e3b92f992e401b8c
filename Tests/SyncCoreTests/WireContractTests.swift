import Foundation
import FormModel
import Testing
@testable import SyncCore

/// Holds the wire types' one codec, the byte codec, to their contract, the schemas of Schema/openapi.yaml: every
/// member a type writes is a property of its schema and every required property is written; and fixed documents
/// in the schema's layout, whose members are checked against the schema too, are what the writer writes and
/// what the reader reads (in the writer's member order and in the reverse one). A member renamed in the reader,
/// the writer or the schema fails one of them.
struct WireContractTests {
    static let openAPI = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Schema/openapi.yaml")

    /// One object schema of `components.schemas`: its required properties and all its properties.
    struct ObjectSchema {
        var required: Set<String> = []
        var properties: Set<String> = []
    }

    /// Reads the schema `name` from openapi.yaml (two-space indentation: schemas at 4, their keywords at 6,
    /// properties at 8).
    static func schema(_ name: String) throws -> ObjectSchema {
        let lines = try String(contentsOf: openAPI, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let schemas = try #require(lines.firstIndex(of: "  schemas:"), "openapi.yaml has no components.schemas")
        let start = try #require(lines[schemas...].firstIndex(of: "    \(name):"), "openapi.yaml has no schema \(name)")
        var result = ObjectSchema()
        var inProperties = false
        for line in lines[(start + 1)...] {
            let indent = line.prefix(while: { $0 == " " }).count
            if !line.isEmpty && indent <= 4 { break }
            if indent == 6 {
                inProperties = line.hasPrefix("      properties:")
                if line.hasPrefix("      required: [") {
                    let list = line.drop(while: { $0 != "[" }).dropFirst().prefix(while: { $0 != "]" })
                    result.required = Set(list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                }
            } else if indent == 8, inProperties, let colon = line.firstIndex(of: ":") {
                result.properties.insert(String(line[line.index(line.startIndex, offsetBy: 8)..<colon]))
            }
        }
        #expect(!result.properties.isEmpty, "the schema \(name) lists no properties")
        return result
    }

    /// The members of the JSON object `bytes`.
    static func members(_ bytes: some Sequence<UInt8>) throws -> Set<String> {
        var reader = JSONReader(Array(bytes))
        var keys = Set<String>()
        try reader.beginObject()
        while let key = try reader.nextKey() {
            keys.insert(key)
            try reader.skipValue()
        }
        try reader.finish()
        return keys
    }

    /// `full` (every optional member set) writes exactly the schema's properties, `minimal` its required ones
    /// (at least), and both only known ones.
    static func check(_ name: String, full: some Sequence<UInt8>, minimal: some Sequence<UInt8>, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let schema = try schema(name)
        let written = try members(full)
        #expect(written == schema.properties, "\(name): written \(written.sorted()), the contract says \(schema.properties.sorted())", sourceLocation: sourceLocation)
        let least = try members(minimal)
        #expect(schema.required.isSubset(of: least), "\(name) leaves out required \(schema.required.subtracting(least).sorted())", sourceLocation: sourceLocation)
        #expect(least.isSubset(of: schema.properties), "\(name) writes unknown \(least.subtracting(schema.properties).sorted())", sourceLocation: sourceLocation)
    }

    /// The same object with its members in the reverse order (each value copied as it is).
    static func reversed(_ bytes: [UInt8]) throws -> [UInt8] {
        var reader = JSONReader(bytes)
        var members: [(String, ArraySlice<UInt8>)] = []
        try reader.beginObject()
        while let key = try reader.nextKey() { members.append((key, try reader.rawValue())) }
        try reader.finish()
        var writer = JSONWriter()
        writer.beginObject()
        for (key, value) in members.reversed() {
            writer.key(key)
            writer.raw(value)
        }
        writer.endObject()
        return writer.bytes
    }

    /// `document` (in the layout of the schema `name`, when one is given) is exactly what `value` writes, and
    /// `read` gives `value` back from it and from its members in the reverse order.
    static func fixed<Value: Equatable>(
        _ name: String?, _ document: String, _ value: Value, writes: (Value) -> [UInt8], reads read: ([UInt8]) throws -> Value,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws {
        let bytes = Array(document.utf8)
        if let name {
            let schema = try schema(name)
            let written = try members(bytes)
            #expect(written.isSubset(of: schema.properties) && schema.required.isSubset(of: written), "\(name): the fixed document has \(written.sorted()), the contract \(schema.properties.sorted())", sourceLocation: sourceLocation)
        }
        #expect(String(decoding: writes(value), as: UTF8.self) == document, sourceLocation: sourceLocation)
        #expect(try read(bytes) == value, sourceLocation: sourceLocation)
        #expect(try read(reversed(bytes)) == value, "members in another order", sourceLocation: sourceLocation)
    }

    static let clock = HybridTimestamp(millis: 1_800_000_000_000, counter: 2)
    static let stamp = FieldState(value: .text("Pump"), revision: 3, hlc: clock, clientID: "device-a")
    static let times = RecordTimes(created: Date(timeIntervalSince1970: 1_800_000_000), updated: Date(timeIntervalSince1970: 1_800_000_100), submitted: Date(timeIntervalSince1970: 1_800_000_200))

    @Test func aRecordEnvelopeWritesTheRecordSnapshotSchema() throws {
        let full = RecordEnvelope(
            recordID: UUID(), form: FormKey(id: "job", version: 2), state: .submitted, revision: 3, sequence: 9, author: "ana",
            review: RecordReview(state: .hasIssues, comment: "Photograph the meter"), times: Self.times,
            missingAttachments: [String(repeating: "a", count: 64)], fields: ["site": Self.stamp])
        let minimal = RecordEnvelope(
            recordID: UUID(), form: FormKey(id: "job", version: 1), state: .draft, revision: 1, sequence: 1, author: "ana", fields: [:])
        try Self.check("RecordSnapshot", full: full.jsonBytes(), minimal: minimal.jsonBytes())
        #expect(try RecordEnvelope(jsonBytes: full.jsonBytes()) == full)
    }

    @Test func aPullPageWritesItsSchema() throws {
        let record = RecordEnvelope(recordID: UUID(), form: FormKey(id: "job", version: 1), state: .draft, revision: 1, sequence: 1, author: "ana", fields: [:])
        let lost = LostConflict(id: 4, recordID: record.recordID, entry: ConflictEntry(fieldID: "site", policy: .lastWriterWins, winner: .server, server: Self.stamp, client: Self.stamp))
        let full = PullPage(changes: [record], cursor: 1, hasMore: false, serverClock: Self.clock, lostConflicts: [lost])
        let minimal = PullPage(changes: [], cursor: 0, hasMore: false, serverClock: Self.clock)
        try Self.check("PullPage", full: full.jsonBytes(), minimal: minimal.jsonBytes())
        #expect(try PullPage(jsonBytes: full.jsonBytes()) == full)
    }

    @Test func fieldStatesAndChangesWriteTheirSchemas() throws {
        try Self.check("FieldState", full: Self.stamp.jsonBytes(), minimal: Self.stamp.jsonBytes())
        let change = FieldChange(value: .integer(3), baseRevision: 2, hlc: Self.clock)
        try Self.check("FieldChange", full: change.jsonBytes(), minimal: change.jsonBytes())
    }

    @Test func mutationsWriteTheirSchema() throws {
        let full = Mutation(
            mutationID: "m1", recordID: UUID(), form: FormKey(id: "job", version: 1), state: .submitted,
            changes: ["site": FieldChange(value: .text("Pump"), baseRevision: 0, hlc: Self.clock)], times: Self.times)
        let minimal = Mutation(mutationID: "m2", recordID: UUID(), form: FormKey(id: "job", version: 1), state: .draft, changes: [:])
        try Self.check("Mutation", full: full.jsonBytes(), minimal: minimal.jsonBytes())
    }

    @Test func pushRequestsWriteTheirSchema() throws {
        let mutation = Mutation(mutationID: "m1", recordID: UUID(), form: FormKey(id: "job", version: 1), state: .draft, changes: [:])
        let full = PushRequest(clientID: "device-a", clock: Self.clock, mutations: [mutation])
        let minimal = PushRequest(clientID: "device-a", mutations: [])
        let schema = try Self.schema("PushRequest")
        let written = try Self.members(full.jsonBytes())
        #expect(schema.required.isSubset(of: try Self.members(minimal.jsonBytes())))
        // The signatures are written by the signing device's writer, never by a push value.
        let key = DeviceSigningKey()
        let signed = try Self.members(PushRequest.deviceBytes(clientID: "device-a", [mutation], signingKey: key))
        let signedOlder = try Self.members(PushRequest.deviceBytes(clientID: "device-a", [mutation], signingKey: key, perMutation: true))
        #expect(written.union(signed).union(signedOlder) == schema.properties, "written \(written.union(signed).union(signedOlder).sorted()), the contract says \(schema.properties.sorted())")
        #expect(written == ["clientId", "clock", "mutations"])
    }

    @Test func outcomesAndConflictsWriteTheirSchemas() throws {
        let conflict = ConflictEntry(fieldID: "site", policy: .manual, winner: .server, open: true, server: Self.stamp, client: Self.stamp)
        let bare = ConflictEntry(kind: .restoredAfterDelete, fieldID: nil, policy: .lastWriterWins, winner: .client, server: nil, client: nil)
        try Self.check("ConflictEntry", full: conflict.jsonBytes(), minimal: bare.jsonBytes())

        let problem = ProblemDetails(type: "https://fieldsheet.dev/problems/invalid", title: "Invalid", status: 422, detail: "No.", field: "site")
        let full = MutationOutcome(mutationID: "m1", recordID: UUID(), status: .merged, revision: 4, conflicts: [conflict], problem: problem, changed: true)
        let minimal = MutationOutcome(mutationID: "m2", recordID: UUID(), status: .rejected)
        try Self.check("MutationOutcome", full: full.jsonBytes(), minimal: minimal.jsonBytes())

        var writer = JSONWriter()
        problem.write(to: &writer)
        try Self.check("Problem", full: writer.bytes, minimal: writer.bytes)

        let response = PushResponse(outcomes: [full], serverClock: Self.clock)
        try Self.check("PushResponse", full: response.jsonBytes(), minimal: response.jsonBytes())
    }

    // Fixed documents of each push type, in the layout of its schema.

    static let recordID = UUID(uuidString: "7c37e370-0b6a-4f53-9d3c-1e2a3b4c5d6e")!
    static let stampJSON = #"{"clientId":"device-a","hlc":117964800000000002,"revision":3,"value":{"text":"Pump"}}"#
    static let changeJSON = #"{"baseRevision":0,"hlc":117964800000000002,"value":{"text":"Pump"}}"#
    static let mutationJSON = #"{"changes":{"notes":{"baseRevision":2,"hlc":117964800000000002,"value":null},"site":\#(changeJSON)},"createdAt":1800000000000,"formId":"job","formVersion":2,"mutationId":"m1","recordId":"7c37e370-0b6a-4f53-9d3c-1e2a3b4c5d6e","state":"submitted","submittedAt":1800000200000,"updatedAt":1800000100000}"#
    static let mutation = Mutation(
        mutationID: "m1", recordID: recordID, form: FormKey(id: "job", version: 2), state: .submitted,
        changes: ["site": FieldChange(value: .text("Pump"), baseRevision: 0, hlc: clock), "notes": FieldChange(value: nil, baseRevision: 2, hlc: clock)],
        times: times)
    static let conflictJSON = #"{"client":\#(stampJSON),"fieldId":"site","kind":"field","open":true,"policy":"manual","server":\#(stampJSON),"winner":"server"}"#
    static let conflict = ConflictEntry(fieldID: "site", policy: .manual, winner: .server, open: true, server: stamp, client: stamp)
    static let problemJSON = #"{"detail":"No.","field":"site","status":422,"title":"Invalid","type":"https://fieldsheet.dev/problems/invalid"}"#
    static let outcomeJSON = #"{"changed":true,"conflicts":[\#(conflictJSON)],"mutationId":"m1","problem":\#(problemJSON),"recordId":"7c37e370-0b6a-4f53-9d3c-1e2a3b4c5d6e","revision":4,"status":"merged"}"#
    static let outcome = MutationOutcome(
        mutationID: "m1", recordID: recordID, status: .merged, revision: 4, conflicts: [conflict],
        problem: ProblemDetails(type: "https://fieldsheet.dev/problems/invalid", title: "Invalid", status: 422, detail: "No.", field: "site"), changed: true)

    @Test func fieldStatesAndChangesAreTheFixedDocuments() throws {
        #expect(Self.clock.rawValue == 117_964_800_000_000_002)
        try Self.fixed("FieldState", Self.stampJSON, Self.stamp, writes: { $0.jsonBytes() }, reads: FieldState.init(jsonBytes:))
        let change = FieldChange(value: .text("Pump"), baseRevision: 0, hlc: Self.clock)
        try Self.fixed("FieldChange", Self.changeJSON, change, writes: { $0.jsonBytes() }, reads: FieldChange.init(jsonBytes:))
        let cleared = FieldChange(value: nil, baseRevision: 2, hlc: Self.clock)
        try Self.fixed("FieldChange", #"{"baseRevision":2,"hlc":117964800000000002,"value":null}"#, cleared, writes: { $0.jsonBytes() }, reads: FieldChange.init(jsonBytes:))
        #expect(try FieldChange(jsonBytes: Array(#"{"hlc":117964800000000002,"baseRevision":2}"#.utf8)) == cleared, "a value left out clears the field")
    }

    @Test func mutationsAndPushRequestsAreTheFixedDocuments() throws {
        try Self.fixed("Mutation", Self.mutationJSON, Self.mutation, writes: { $0.jsonBytes() }, reads: Mutation.init(jsonBytes:))
        let request = PushRequest(clientID: "device-a", clock: Self.clock, mutations: [Self.mutation])
        try Self.fixed(
            "PushRequest", #"{"clientId":"device-a","clock":117964800000000002,"mutations":[\#(Self.mutationJSON)]}"#, request,
            writes: { $0.jsonBytes() }, reads: { try PushRequest(jsonBytes: $0) })
        try Self.fixed(
            "PushRequest", #"{"clientId":"device-a","mutations":[]}"#, PushRequest(clientID: "device-a", mutations: []),
            writes: { $0.jsonBytes() }, reads: { try PushRequest(jsonBytes: $0) })
    }

    @Test func outcomesConflictsAndResponsesAreTheFixedDocuments() throws {
        try Self.fixed("ConflictEntry", Self.conflictJSON, Self.conflict, writes: { $0.jsonBytes() }, reads: ConflictEntry.init(jsonBytes:))
        let restored = ConflictEntry(kind: .restoredAfterDelete, fieldID: nil, policy: .lastWriterWins, winner: .client, server: nil, client: nil)
        try Self.fixed(
            "ConflictEntry", #"{"kind":"restoredAfterDelete","open":false,"policy":"lastWriterWins","winner":"client"}"#, restored,
            writes: { $0.jsonBytes() }, reads: ConflictEntry.init(jsonBytes:))
        try Self.fixed("MutationOutcome", Self.outcomeJSON, Self.outcome, writes: { $0.jsonBytes() }, reads: MutationOutcome.init(jsonBytes:))
        let rejected = MutationOutcome(mutationID: "m2", recordID: Self.recordID, status: .rejected)
        try Self.fixed(
            "MutationOutcome", #"{"conflicts":[],"mutationId":"m2","recordId":"7c37e370-0b6a-4f53-9d3c-1e2a3b4c5d6e","status":"rejected"}"#, rejected,
            writes: { $0.jsonBytes() }, reads: MutationOutcome.init(jsonBytes:))
        let response = PushResponse(outcomes: [Self.outcome, rejected], serverClock: Self.clock)
        let responseJSON = #"{"outcomes":[\#(Self.outcomeJSON),\#(String(decoding: rejected.jsonBytes(), as: UTF8.self))],"serverClock":117964800000000002}"#
        try Self.fixed("PushResponse", responseJSON, response, writes: { $0.jsonBytes() }, reads: PushResponse.init(jsonBytes:))
        // A pull page's lost conflict (its schema is the page's `lostConflicts` items: id, recordId, entry).
        let lost = LostConflict(id: 4, recordID: Self.recordID, entry: Self.conflict)
        try Self.fixed(
            nil, #"{"id":4,"recordId":"7c37e370-0b6a-4f53-9d3c-1e2a3b4c5d6e","entry":\#(Self.conflictJSON)}"#, lost,
            writes: { $0.jsonBytes() }, reads: LostConflict.init(jsonBytes:))
        let contract = try String(contentsOf: Self.openAPI, encoding: .utf8)
        let start = try #require(contract.range(of: "\n        lostConflicts:\n"), "openapi.yaml: PullPage.lostConflicts")
        let end = try #require(contract.range(of: "\n    EntityList:", range: start.upperBound..<contract.endIndex))
        let items = contract[start.upperBound..<end.lowerBound]
        #expect(items.contains("required: [id, recordId, entry]"))
        for member in try Self.members(lost.jsonBytes()) {
            #expect(items.contains("\n              \(member): "), "the contract's lost conflict has no \(member)")
        }
    }

    @Test func theReadersRefuseWhatTheContractRequires() throws {
        // Each required member left out of a fixed document is refused with an error, never a crash.
        for (name, document, read) in [
            ("FieldState", Self.stampJSON, { _ = try FieldState(jsonBytes: $0) }),
            ("FieldChange", Self.changeJSON, { _ = try FieldChange(jsonBytes: $0) }),
            ("Mutation", Self.mutationJSON, { _ = try Mutation(jsonBytes: $0) }),
            ("ConflictEntry", Self.conflictJSON, { _ = try ConflictEntry(jsonBytes: $0) }),
            ("MutationOutcome", Self.outcomeJSON, { _ = try MutationOutcome(jsonBytes: $0) }),
        ] as [(String, String, ([UInt8]) throws -> Void)] {
            // Members the reader fills in when absent, as servers before them wrote none.
            let defaulted: Set<String> = ["FieldState.value", "ConflictEntry.kind", "ConflictEntry.open", "MutationOutcome.conflicts"]
            for member in try Self.schema(name).required where !defaulted.contains("\(name).\(member)") {
                let without = try Self.without(member, Array(document.utf8))
                #expect(throws: JSONReadError.self, "\(name) without \(member)") { try read(without) }
            }
        }
        #expect(throws: JSONReadError.self) { try PushRequest(jsonBytes: Array(#"{"mutations":[]}"#.utf8)) }
        #expect(throws: JSONReadError.self) { try PushRequest(jsonBytes: Array(#"{"clientId":"d"}"#.utf8)) }
        #expect(throws: JSONReadError.self) { try PushResponse(jsonBytes: Array(#"{"outcomes":[]}"#.utf8)) }
        #expect(throws: JSONReadError.self, "one value, nothing after it") { try FieldState(jsonBytes: Array((Self.stampJSON + "{}").utf8)) }
    }

    /// The object `bytes` without its member `name`.
    static func without(_ name: String, _ bytes: [UInt8]) throws -> [UInt8] {
        var reader = JSONReader(bytes)
        var writer = JSONWriter()
        writer.beginObject()
        try reader.beginObject()
        while let key = try reader.nextKey() {
            let value = try reader.rawValue()
            guard key != name else { continue }
            writer.key(key)
            writer.raw(value)
        }
        writer.endObject()
        return writer.bytes
    }
}

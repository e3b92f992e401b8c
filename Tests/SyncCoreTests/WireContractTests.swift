import Foundation
import FormModel
import Testing
@testable import SyncCore

/// Holds the wire types' codecs to their contract, the schemas of Schema/openapi.yaml: every member a type
/// writes is a property of its schema, every required property is written, and where a type has a Codable
/// conformance beside its byte codec, both write the same members.
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

    /// Where a type has both codecs, Codable writes the members the byte codec writes.
    static func twins(_ value: some Encodable, _ bytes: [UInt8], sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        #expect(try members(JSONEncoder().encode(value)) == members(bytes), "\(type(of: value)): Codable and the byte codec write different members", sourceLocation: sourceLocation)
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

    @Test func fieldStatesAndChangesWriteTheirSchemasInBothCodecs() throws {
        var writer = JSONWriter()
        Self.stamp.write(to: &writer)
        try Self.check("FieldState", full: writer.bytes, minimal: writer.bytes)
        try Self.twins(Self.stamp, writer.bytes)

        let change = FieldChange(value: .integer(3), baseRevision: 2, hlc: Self.clock)
        writer = JSONWriter()
        change.write(to: &writer)
        try Self.check("FieldChange", full: writer.bytes, minimal: writer.bytes)
        try Self.twins(change, writer.bytes)
    }

    @Test func mutationsWriteTheirSchemaInBothCodecs() throws {
        let full = Mutation(
            mutationID: "m1", recordID: UUID(), form: FormKey(id: "job", version: 1), state: .submitted,
            changes: ["site": FieldChange(value: .text("Pump"), baseRevision: 0, hlc: Self.clock)], times: Self.times)
        let minimal = Mutation(mutationID: "m2", recordID: UUID(), form: FormKey(id: "job", version: 1), state: .draft, changes: [:])
        try Self.check("Mutation", full: full.jsonBytes(), minimal: minimal.jsonBytes())
        try Self.twins(full, full.jsonBytes())
        try Self.twins(minimal, minimal.jsonBytes())
    }

    @Test func outcomesAndConflictsWriteTheirSchemasInBothCodecs() throws {
        let conflict = ConflictEntry(fieldID: "site", policy: .manual, winner: .server, open: true, server: Self.stamp, client: Self.stamp)
        let bare = ConflictEntry(kind: .restoredAfterDelete, fieldID: nil, policy: .lastWriterWins, winner: .client, server: nil, client: nil)
        try Self.check("ConflictEntry", full: conflict.jsonBytes(), minimal: bare.jsonBytes())
        try Self.twins(conflict, conflict.jsonBytes())
        try Self.twins(bare, bare.jsonBytes())

        let problem = ProblemDetails(type: "https://fieldsheet.dev/problems/invalid", title: "Invalid", status: 422, detail: "No.", field: "site")
        let full = MutationOutcome(mutationID: "m1", recordID: UUID(), status: .merged, revision: 4, conflicts: [conflict], problem: problem, changed: true)
        let minimal = MutationOutcome(mutationID: "m2", recordID: UUID(), status: .rejected)
        try Self.check("MutationOutcome", full: full.jsonBytes(), minimal: minimal.jsonBytes())
        try Self.twins(full, full.jsonBytes())
        try Self.twins(minimal, minimal.jsonBytes())

        var writer = JSONWriter()
        problem.write(to: &writer)
        try Self.check("Problem", full: writer.bytes, minimal: writer.bytes)
        try Self.twins(problem, writer.bytes)

        let response = PushResponse(outcomes: [full], serverClock: Self.clock)
        try Self.check("PushResponse", full: response.jsonBytes(), minimal: response.jsonBytes())
        try Self.twins(response, response.jsonBytes())
    }
}

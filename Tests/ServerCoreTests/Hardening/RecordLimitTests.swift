import FieldSheetTestTraits
import Foundation
import FormModel
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

/// One member's records cannot grow without bound: a record's repeat instances and bytes are capped (a
/// change past a cap is refused for that record with `record-too-large`, and a record may still shrink),
/// and an answer's size counts all of a multiple choice's choices together.
@Suite(.measuresTiming)
struct RecordLimitTests {
    static let form = FormDefinition(id: "survey", version: 1, title: "Survey", completionLabel: "Add", pages: [
        FormPage(id: "main", fields: [
            FieldDefinition(id: "tags", kind: .multipleChoice, label: "Tags", choices: [Choice(value: "a", label: "A")]),
            FieldDefinition(id: "defects", kind: .repeat, label: "Defects", fields: [FieldDefinition(id: "location", kind: .text, label: "Where")]),
        ]),
    ])

    static func instances(_ device: Device, _ range: Range<Int>, text: String = "here") -> [String: FieldChange] {
        var changes: [String: FieldChange] = [:]
        for index in range {
            changes["defects/i\(index)/@position"] = device.change(.integer(index))
            changes["defects/i\(index)/location"] = device.change(.text(text))
        }
        return changes
    }

    @Test(arguments: Backend.available)
    func aRecordCannotGrowPastItsInstanceAndByteLimits(backend: Backend) async throws {
        var limits = ServerLimits()
        limits.maxRecordInstances = 50
        limits.maxRecordBytes = 64 * 1024
        try await TestServer.with(backend, limits: limits) { server in
            try await server.publish(Self.form, project: "alpha")
            let mallory = Device(clientID: "mallory-phone", token: try await server.member("mallory", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                // 51 instances in one draft: refused; 50: taken; one more later: refused.
                let (_, tooMany) = try await mallory.push(client, [mallory.mutation(UUID(), state: .draft, form: "survey", Self.instances(mallory, 0..<51))])
                let refused = try #require(tooMany?.outcomes.first)
                #expect(refused.status == .rejected)
                #expect(refused.problem?.type.hasSuffix("record-too-large") == true)
                #expect(refused.problem?.detail.contains("51 repeat instances") == true, "\(String(describing: refused.problem))")
                #expect(refused.problem?.detail.contains("at most 50") == true)
                let record = UUID()
                let (_, fifty) = try await mallory.push(client, [mallory.mutation(record, state: .draft, form: "survey", Self.instances(mallory, 0..<50))])
                #expect(fifty?.outcomes.first?.status == .applied)
                let (_, more) = try await mallory.push(client, [mallory.mutation(record, state: .draft, form: "survey", Self.instances(mallory, 50..<51))])
                #expect(more?.outcomes.first?.status == .rejected)
                #expect(more?.outcomes.first?.problem?.type.hasSuffix("record-too-large") == true)

                // Bytes: 40 KiB, then 40 KiB more (refused), then the first cleared (a shrink is taken).
                let big = String(repeating: "x", count: 40 * 1024)
                let grown = UUID()
                let (_, first) = try await mallory.push(client, [mallory.mutation(grown, state: .draft, form: "survey", Self.instances(mallory, 0..<1, text: big))])
                #expect(first?.outcomes.first?.status == .applied)
                let (_, second) = try await mallory.push(client, [mallory.mutation(grown, state: .draft, form: "survey", Self.instances(mallory, 1..<2, text: big))])
                #expect(second?.outcomes.first?.status == .rejected)
                #expect(second?.outcomes.first?.problem?.detail.contains("at most 65536") == true, "\(String(describing: second?.outcomes.first?.problem))")
                let (_, shrink) = try await mallory.push(client, [mallory.mutation(grown, state: .draft, form: "survey", ["defects/i0/location": mallory.change(.text("short"), base: 1, millis: 2_000)])])
                #expect(shrink?.outcomes.first?.status != .rejected, "\(String(describing: shrink?.outcomes.first?.problem))")
                let stored = try #require(try await server.storage.record(projectID: try await server.project("alpha").id, id: record))
                #expect(PushPlanner.instanceCount(stored.fields) == 50)
            }
        }
    }

    /// Mallory pushes records at the default limits (2,000 instances) and past them, one after another, while
    /// Bob's small pushes are timed: his p99 stays within 1 s of what it is with nothing else going on.
    @Test(arguments: Backend.available)
    func recordsAtTheLimitsLeaveAnotherMembersPushesFast(backend: Backend) async throws {
        let limit = ServerLimits().maxRecordInstances
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form, project: "alpha")
            try await server.publish(AttachmentAccessTests.form, project: "alpha")
            let mallory = Device(clientID: "mallory-phone", token: try await server.member("mallory", project: "alpha", role: .collector))
            let bob = Device(clientID: "bob-phone", token: try await server.member("bob", project: "alpha", role: .collector))
            // Encoded before the clock starts: encoding in this process would stall it, not the server.
            let bodies = (0..<3).flatMap { _ in
                [limit + 1, limit].map { count in
                    Data(PushRequest(clientID: mallory.clientID, mutations: [
                        mallory.mutation(UUID(), state: .draft, form: "survey", Self.instances(mallory, 0..<count)),
                    ]).jsonBytes())
                }
            }
            try await server.app.test(.live) { client in
                let port = try #require(client.port)
                let bystander = Bystander(device: bob, form: "inspection")
                let baseline = try await bystander.baseline(port: port)
                let (outcomes, latencies) = try await bystander.timing(port: port) {
                    var outcomes: [MutationOutcome.Status?] = []
                    for body in bodies {
                        let (status, answer) = try await mallory.pushOnOwnConnection(port: port, body: body)
                        #expect(status == .ok)
                        outcomes.append(answer?.outcomes.first?.status)
                    }
                    return outcomes
                }
                #expect(outcomes == [.rejected, .applied, .rejected, .applied, .rejected, .applied])
                Bystander.check(latencies, baseline: baseline, during: "RecordLimitTests.recordsAtTheLimits[\(backend)]")
            }
        }
    }

    /// A multiple choice of 80 choices of 64 KiB (5.2 MB) or of 500,000 choices is one answer too large,
    /// though no single choice is.
    @Test(arguments: Backend.available)
    func aMultipleChoiceIsBoundAsAWhole(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form, project: "alpha")
            let mallory = Device(clientID: "mallory-phone", token: try await server.member("mallory", project: "alpha", role: .collector))
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                let wide = (0..<80).map { String(repeating: Character(UnicodeScalar(UInt8(65 + $0 % 26))), count: 64 * 1024 - 8) + String(format: "%08d", $0) }
                let many = (0..<500_000).map { "c\($0 % 10)" }
                for (choices, count) in [(wide, 80), (many, 500_000)] {
                    let (response, _) = try await mallory.push(client, [mallory.mutation(UUID(), state: .draft, form: "survey", ["tags": mallory.change(.choices(choices))])])
                    #expect(response.status == .contentTooLarge)
                    #expect(response.problem?.type.hasSuffix("value-too-large") == true)
                    #expect(response.problem?.detail.contains("holds \(count) choices") == true, "\(response.text.prefix(300))")
                }
                let (ok, answer) = try await ana.push(client, [ana.mutation(UUID(), state: .draft, form: "survey", ["tags": ana.change(.choices(["a"]))])])
                #expect(ok.status == .ok)
                #expect(answer?.outcomes.first?.status == .applied)
            }
        }
    }
}

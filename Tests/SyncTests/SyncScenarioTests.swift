import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import SyncClient
import SyncCore
import Testing

/// Devices and a real server on loopback: after everyone syncs, all hold the same values and every value
/// anyone typed is current or in a conflict log.
struct SyncScenarioTests {
    @Test func aRecordFilledOnOneDeviceReachesAnotherWithItsForms() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let (phone, tablet) = (try fixture.device(token: token), try fixture.device(token: token))
        try await phone.sync()  // fetches the forms
        let id = try await phone.fill("job", ["title": .text("Boiler"), "count": .integer(2)], submit: true)
        let pushed = try await phone.sync()
        #expect(pushed.pushed == 1)
        let pulled = try await tablet.sync()
        #expect(pulled.pulled == 1)
        #expect(try await tablet.values(id) == ["title": .text("Boiler"), "count": .integer(2)])
        #expect(try await tablet.store.record(id)?.state == .submitted)
        try await Convergence.check([phone, tablet], server: fixture, token: token)
        // A second sync has nothing to do.
        let again = try await phone.sync()
        #expect(again.pushed == 0 && again.pulled == 0)
    }

    @Test(arguments: ConflictPolicy.allCases)
    func theSameFieldEditedOnTwoDevices(policy: ConflictPolicy) async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job(policy: policy)])
        let token = try await fixture.user("alice")
        let (first, second) = (try fixture.device(token: token), try fixture.device(token: token))
        try await first.sync()
        let id = try await first.fill("job", ["title": .text("Pump"), "notes": .text("start")], submit: true)
        try await first.sync()
        try await second.sync()
        try await first.edit(id, ["notes": .text("from first")])
        try await second.edit(id, ["notes": .text("from second")])  // later clock
        try await first.sync()
        let summary = try await second.sync()
        #expect(summary.conflicts == 1)
        try await first.sync()
        let expected: String
        switch policy {
        case .lastWriterWins, .clientWins: expected = "from second"
        case .serverWins, .manual: expected = "from first"
        }
        #expect(try await first.values(id)["notes"] == .text(expected))
        let open = try await second.store.conflicts(openOnly: true)
        // Open on the second device where its value did not stand: a person decides (manual), or the server's
        // value replaced it (serverWins); where it won, the entry is only for reading.
        #expect(open.count == (policy == .manual || policy == .serverWins ? 1 : 0))
        let typed = [Typed(record: id, field: "notes", value: .text("from first")), Typed(record: id, field: "notes", value: .text("from second"))]
        try await Convergence.check([first, second], server: fixture, token: token, typed: typed)
        if policy == .manual {
            #expect(open.first?.mine == .text("from second"))
            #expect(open.first?.theirs == .text("from first"))
            try await second.store.resolveConflict(record: id, field: "notes", choice: .mine)
            try await second.sync()
            try await first.sync()
            #expect(try await first.values(id)["notes"] == .text("from second"))
            #expect(try await second.store.conflicts(openOnly: true).isEmpty)
            try await Convergence.check([first, second], server: fixture, token: token, typed: typed)
        }
    }

    @Test func differentFieldsOfOneRecordAreMerged() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job(policy: .manual)])
        let token = try await fixture.user("alice")
        let (first, second) = (try fixture.device(token: token), try fixture.device(token: token))
        try await first.sync()
        let id = try await first.fill("job", ["title": .text("Valve")], submit: true)
        try await first.sync()
        try await second.sync()
        try await first.edit(id, ["notes": .text("replaced gasket")])
        try await second.edit(id, ["count": .integer(3)])
        try await first.sync()
        #expect(try await second.sync().conflicts == 0)
        try await first.sync()
        #expect(try await first.values(id) == ["title": .text("Valve"), "notes": .text("replaced gasket"), "count": .integer(3)])
        try await Convergence.check([first, second], server: fixture, token: token)
    }

    @Test func anEditAgainstADeleteRestoresTheRecord() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let (first, second) = (try fixture.device(token: token), try fixture.device(token: token))
        try await first.sync()
        let id = try await first.fill("job", ["title": .text("Leak")])
        try await first.sync()
        try await second.sync()
        try await first.store.deleteDraft(id)
        try await second.edit(id, ["notes": .text("still leaking")])
        try await first.sync()
        try await second.sync()
        try await first.sync()
        #expect(try await first.store.record(id)?.state == .draft)
        #expect(try await first.values(id)["notes"] == .text("still leaking"))
        try await Convergence.check([first, second], server: fixture, token: token, typed: [Typed(record: id, field: "notes", value: .text("still leaking"))])
    }

    @Test func aDraftStartedOnOneDeviceIsFinishedOnAnotherAndStaysPrivateUntilThen() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let alice = try await fixture.user("alice")
        let bob = try await fixture.user("bob")
        let rita = try await fixture.user("rita", role: "reviewer")
        let (phone, tablet) = (try fixture.device(token: alice), try fixture.device(token: alice))
        let (bobs, ritas) = (try fixture.device(token: bob), try fixture.device(token: rita))
        try await phone.sync()
        let id = try await phone.fill("job", ["notes": .text("half done")])
        try await phone.sync()
        try await tablet.sync()
        try await bobs.sync()
        try await ritas.sync()
        #expect(try await tablet.store.record(id)?.state == .draft)
        #expect(try await bobs.store.record(id) == nil)
        #expect(try await ritas.store.record(id) == nil)
        try await tablet.edit(id, ["title": .text("Finished on the tablet")], complete: true)
        try await tablet.sync()
        try await phone.sync()
        try await ritas.sync()
        try await bobs.sync()
        #expect(try await phone.store.record(id)?.state == .submitted)
        #expect(try await ritas.values(id) == ["notes": .text("half done"), "title": .text("Finished on the tablet")])
        #expect(try await bobs.store.record(id) == nil)
        try await Convergence.check([phone, tablet, ritas], server: fixture, token: alice)
    }

    @Test func aDeviceOfflineForAThousandEditsAcrossAHundredRecords() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let (offline, other) = (try fixture.device(token: token), try fixture.device(token: token))
        try await offline.sync()
        var ids: [UUID] = []
        for index in 0..<100 { ids.append(try await offline.fill("job", ["title": .text("Job \(index)")])) }
        for round in 1...9 {
            for id in ids { try await offline.edit(id, ["count": .integer(round)]) }
        }
        #expect(try await offline.store.outboxCount() == 1_100)  // 100 creations and 1,000 edits
        let summary = try await offline.sync()
        #expect(summary.pushed == 100)
        try await other.sync()
        for id in ids.prefix(5) { #expect(try await other.values(id)["count"] == .integer(9)) }
        try await Convergence.check([offline, other], server: fixture, token: token)
    }

    @Test func aReviewerCorrectsASubmittedRecordWhileItsCollectorEditsIt() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job(policy: .lastWriterWins)])
        let alice = try await fixture.user("alice")
        let rita = try await fixture.user("rita", role: "reviewer")
        let (collector, reviewer) = (try fixture.device(token: alice), try fixture.device(token: rita))
        try await collector.sync()
        let id = try await collector.fill("job", ["title": .text("Roof tiel"), "count": .integer(1)], submit: true)
        try await collector.sync()
        try await reviewer.sync()
        try await reviewer.edit(id, ["title": .text("Roof tile")])
        try await collector.edit(id, ["notes": .text("two tiles cracked"), "count": .integer(2)])
        try await reviewer.sync()
        try await collector.sync()
        try await reviewer.sync()
        #expect(try await collector.values(id) == ["title": .text("Roof tile"), "notes": .text("two tiles cracked"), "count": .integer(2)])
        try await Convergence.check([collector, reviewer], server: fixture, token: alice,
            typed: [Typed(record: id, field: "title", value: .text("Roof tile")), Typed(record: id, field: "notes", value: .text("two tiles cracked"))])
    }
}

import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import SyncClient
import SyncCore
import Testing

/// A record's times are its author's on every device and on the server, and a value that lost a conflict
/// reaches the device that wrote it — two device homes and a real server on loopback.
struct RecordTimesSyncTests {
    /// Waits (polling) until the wall clock is past `date` by `margin`: what tells an author's time from
    /// an arrival time is that some time passed between them.
    func clockPasses(_ date: Date, by margin: TimeInterval = 0.05) async throws {
        let deadline = Date().addingTimeInterval(5)
        while Date() < date.addingTimeInterval(margin) {
            try #require(Date() < deadline, "the clock did not move")
            await Task.yield()
        }
    }

    @Test func aRecordKeepsItsAuthorsTimesOnAnotherDeviceAndOnTheServer() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let (phone, tablet) = (try fixture.device(token: token), try fixture.device(token: token))
        try await phone.sync()
        try await tablet.sync()
        let id = try await phone.fill("job", ["title": .text("Boiler")], submit: true)
        let made = try #require(try await phone.store.record(id))
        let submitted = try #require(made.submittedAt, "the phone keeps when it submitted the record")
        try await clockPasses(made.updatedAt)
        try await phone.sync()
        try await clockPasses(Date())
        // The tablet makes a record of its own after the phone's, then pulls the phone's.
        let own = try await tablet.fill("job", ["title": .text("Tap")], submit: false)
        try await clockPasses(Date())
        try await tablet.sync()

        let arrived = try #require(try await tablet.store.record(id))
        #expect(arrived.createdAt == made.createdAt, "created where it happened, not when it arrived")
        #expect(arrived.updatedAt == made.updatedAt)
        #expect(arrived.submittedAt == submitted)
        let remote = try #require(try await Convergence.serverRecord(id, server: fixture, token: token))
        #expect(remote.times == RecordTimes(created: made.createdAt, updated: made.updatedAt, submitted: submitted))
        // Newest first by the author's time: the tablet's own record was made after the phone's.
        let order = try await tablet.store.recordListSummaries().map(\.id)
        #expect(order == [own, id])
        #expect(try await tablet.store.records().map(\.id) == [own, id])
        // The phone sees the tablet's record with the tablet's times too.
        try await phone.sync()
        let ownOnTablet = try #require(try await tablet.store.record(own))
        let ownOnPhone = try #require(try await phone.store.record(own))
        #expect(ownOnPhone.createdAt == ownOnTablet.createdAt && ownOnPhone.updatedAt == ownOnTablet.updatedAt)
        #expect(ownOnPhone.submittedAt == nil)
    }

    @Test func anEditMadeLaterOnAnotherDeviceMovesTheRecordsTimeEverywhere() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let (phone, tablet) = (try fixture.device(token: token), try fixture.device(token: token))
        try await phone.sync()
        let id = try await phone.fill("job", ["title": .text("Boiler")], submit: true)
        try await phone.sync()
        try await tablet.sync()
        let created = try #require(try await phone.store.record(id)).createdAt
        try await clockPasses(Date())
        try await tablet.edit(id, ["notes": .text("checked")])
        let edited = try #require(try await tablet.store.record(id)).updatedAt
        try await clockPasses(edited)
        try await tablet.sync()
        try await phone.sync()
        let onPhone = try #require(try await phone.store.record(id))
        #expect(onPhone.updatedAt == edited, "the tablet's edit time, not the phone's pull time")
        #expect(onPhone.createdAt == created)
        #expect(try #require(try await Convergence.serverRecord(id, server: fixture, token: token)).times.updated == edited)
    }

    @Test func theDeviceWhoseValueLostGetsTheEntryAtItsNextPull() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let (first, second) = (try fixture.device(token: token), try fixture.device(token: token))
        try await first.sync()
        let id = try await first.fill("job", ["title": .text("Pump"), "notes": .text("start")], submit: true)
        try await first.sync()
        try await second.sync()
        try await first.edit(id, ["notes": .text("from first")])
        try await second.edit(id, ["notes": .text("from second")])  // later clock: wins last-writer-wins
        let firstPush = try await first.sync()
        #expect(firstPush.conflicts == 0)
        #expect(try await second.sync().conflicts == 1, "the second push replaces the first device's value")
        #expect(try await first.store.conflicts().isEmpty, "nothing reached the first device yet")

        try await first.sync()
        let lost = try await first.store.conflicts(openOnly: true, record: id)
        #expect(lost.count == 1)
        let entry = try #require(lost.first)
        #expect(entry.fieldID == "notes")
        #expect(entry.mine == .text("from first"), "this device's value, which lost")
        #expect(entry.theirs == .text("from second"), "the value that won")
        #expect(try await first.values(id)["notes"] == .text("from second"))
        // The record is marked in the first device's list.
        let summary = try #require(try await first.store.recordListSummaries().first { $0.id == id })
        #expect(summary.openConflicts == 1)
        // The same page applied again logs it once.
        let response = try await CurlTransport().send(TransportRequest(
            method: "GET", url: first.configuration.url("changes?after=0&client=\(first.store.deviceID)"), headers: ["Authorization": "Bearer \(token)"]))
        #expect(response.status == 200)
        let page = [UInt8](response.body)
        #expect(String(decoding: page, as: UTF8.self).contains("\"lostConflicts\""))
        _ = try await first.store.applyPullPage(page)
        _ = try await first.store.applyPullPage(page)
        #expect(try await first.store.conflicts(record: id).count == 1)
        // The person puts their value back: an ordinary edit that syncs, and the other device learns it lost.
        try await first.store.resolveConflict(record: id, field: "notes", choice: .mine)
        try await first.sync()
        try await second.sync()
        #expect(try await second.values(id)["notes"] == .text("from first"))
        #expect(try await first.store.conflicts(openOnly: true).isEmpty)
    }

    @Test func aPushWhoseValueLosesLeavesTheEntryOpenOnThePushingDevice() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let token = try await fixture.user("alice")
        let (first, second) = (try fixture.device(token: token), try fixture.device(token: token))
        try await first.sync()
        let id = try await first.fill("job", ["title": .text("Pump"), "notes": .text("start")], submit: true)
        try await first.sync()
        try await second.sync()
        try await first.edit(id, ["notes": .text("from first")])
        try await second.edit(id, ["notes": .text("from second")])  // later clock: wins
        #expect(try await second.sync().conflicts == 0, "the second device pushes first: nothing to meet")
        // The first device pushes its older value after: the server's (the second device's) value wins.
        #expect(try await first.sync().conflicts == 1)
        let open = try await first.store.conflicts(openOnly: true, record: id)
        #expect(open.count == 1, "the person whose value was replaced sees it, as a device that hears of it by a pull does")
        let entry = try #require(open.first)
        #expect(entry.fieldID == "notes")
        #expect(entry.mine == .text("from first"))
        #expect(entry.theirs == .text("from second"))
        #expect(try await first.values(id)["notes"] == .text("from second"))
        let summary = try #require(try await first.store.recordListSummaries().first { $0.id == id })
        #expect(summary.openConflicts == 1, "the record is marked in the list")
        // The winner learns nothing to decide: its value stands.
        try await second.sync()
        #expect(try await second.store.conflicts(openOnly: true).isEmpty)
        // Keeping the value that won closes the entry and changes nothing on the server.
        try await first.store.resolveConflict(record: id, field: "notes", choice: .theirs)
        try await first.sync()
        #expect(try await first.store.conflicts(openOnly: true).isEmpty)
        #expect(try await first.values(id)["notes"] == .text("from second"))
    }

    @Test func aReviewersEditReachesTheCollectorWhoseValueItReplaced() async throws {
        let fixture = try await SyncFixture(forms: [SyncForms.job()])
        let alice = try await fixture.user("alice")
        let reviewer = try await fixture.user("rita", role: "reviewer")
        let (phone, desk) = (try fixture.device(token: alice), try fixture.device(token: reviewer))
        try await phone.sync()
        try await desk.sync()
        let id = try await phone.fill("job", ["title": .text("Pump"), "notes": .text("start")], submit: true)
        try await phone.sync()
        try await desk.sync()
        try await phone.edit(id, ["notes": .text("phone")])
        try await desk.edit(id, ["notes": .text("desk")])
        try await phone.sync()
        #expect(try await desk.sync().conflicts == 1)
        try await phone.sync()
        let lost = try await phone.store.conflicts(openOnly: true, record: id)
        #expect(lost.map(\.mine) == [.text("phone")] && lost.map(\.theirs) == [.text("desk")])
        #expect(try await desk.store.conflicts(openOnly: true).isEmpty, "the reviewer's value won: nothing for her to decide")
    }
}

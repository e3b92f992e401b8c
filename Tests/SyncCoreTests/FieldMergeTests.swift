import FormModel
import Testing
@testable import SyncCore

struct FieldMergeTests {
    let serverField = FieldState(value: .text("server"), revision: 5, hlc: HybridTimestamp(millis: 1_000, counter: 0), clientID: "device-b")

    func change(_ text: String?, base: Int64, millis: Int64 = 2_000) -> FieldChange {
        FieldChange(value: text.map { .text($0) }, baseRevision: base, hlc: HybridTimestamp(millis: millis, counter: 0))
    }

    func merge(_ change: FieldChange, policy: ConflictPolicy, server: FieldState? = nil, client: String = "device-a") -> FieldMerge.Result {
        FieldMerge.merge(fieldID: "notes", server: server ?? serverField, change: change, clientID: client, policy: policy, revision: 6)
    }

    @Test(arguments: ConflictPolicy.allCases)
    func baseUnchangedOnTheServerApplies(policy: ConflictPolicy) {
        let result = merge(change("device", base: 5), policy: policy)
        #expect(result.newState == FieldState(value: .text("device"), revision: 6, hlc: HybridTimestamp(millis: 2_000, counter: 0), clientID: "device-a"))
        #expect(result.conflict == nil)
    }

    @Test(arguments: ConflictPolicy.allCases)
    func sameValueOnBothSidesChangesNothing(policy: ConflictPolicy) {
        let result = merge(change("server", base: 1), policy: policy)
        #expect(result.newState == nil)
        #expect(result.conflict == nil)
    }

    @Test(arguments: ConflictPolicy.allCases)
    func aFieldTheServerNeverHadIsApplied(policy: ConflictPolicy) {
        let result = FieldMerge.merge(fieldID: "new", server: nil, change: change("x", base: 0), clientID: "a", policy: policy, revision: 1)
        #expect(result.newState?.value == .text("x"))
        #expect(result.conflict == nil)
    }

    @Test func clearingAnAbsentFieldChangesNothing() {
        let result = FieldMerge.merge(fieldID: "new", server: nil, change: change(nil, base: 0), clientID: "a", policy: .manual, revision: 1)
        #expect(result.newState == nil)
    }

    @Test func lastWriterWinsTakesTheLaterClock() {
        let later = merge(change("device", base: 1, millis: 2_000), policy: .lastWriterWins)
        #expect(later.newState?.value == .text("device"))
        #expect(later.conflict?.winner == .client)
        #expect(later.conflict?.losingValue == .text("server"))

        let earlier = merge(change("device", base: 1, millis: 500), policy: .lastWriterWins)
        #expect(earlier.newState == nil)
        #expect(earlier.conflict?.winner == .server)
        #expect(earlier.conflict?.losingValue == .text("device"))
        #expect(earlier.conflict?.open == false)
    }

    @Test func lastWriterWinsBreaksAClockTieByDeviceID() {
        let tie = change("device", base: 1, millis: 1_000)
        #expect(merge(tie, policy: .lastWriterWins, client: "device-c").conflict?.winner == .client)
        #expect(merge(tie, policy: .lastWriterWins, client: "device-a").conflict?.winner == .server)
    }

    @Test func serverWinsKeepsTheServerValueAndLogsTheDevices() {
        let result = merge(change("device", base: 1, millis: 9_000), policy: .serverWins)
        #expect(result.newState == nil)
        #expect(result.conflict?.winner == .server)
        #expect(result.conflict?.server == serverField)
        #expect(result.conflict?.client?.value == .text("device"))
    }

    @Test func clientWinsTakesTheDeviceValueAndLogsTheServers() {
        let result = merge(change("device", base: 1, millis: 10), policy: .clientWins)
        #expect(result.newState?.value == .text("device"))
        #expect(result.conflict?.winner == .client)
        #expect(result.conflict?.losingValue == .text("server"))
    }

    @Test func manualKeepsTheServerValueAndOpensAConflict() {
        let result = merge(change("device", base: 1, millis: 9_000), policy: .manual)
        #expect(result.newState == nil)
        #expect(result.conflict?.open == true)
        #expect(result.conflict?.server?.value == .text("server"))
        #expect(result.conflict?.client?.value == .text("device"))
    }

    @Test(arguments: ConflictPolicy.allCases)
    func clearingAFieldBothSidesChangedIsAConflictToo(policy: ConflictPolicy) {
        let result = merge(change(nil, base: 1, millis: 9_000), policy: policy)
        #expect(result.conflict != nil)
    }
}

import Foundation
import FormModel
import Testing
@testable import SyncCore

@Suite("A pulled record rebased under what the device still has to send")
struct DeviceSyncRebaseTests {
    @Test func nothingPendingTakesThePulledRecordWhole() {
        for state in RecordState.allCases {
            let rebase = DeviceSync.rebase(pulledState: state, under: .none)
            #expect(rebase == DeviceSync.PullRebase(keepsLocalState: false, keepsLocalFormVersion: false, keepsLocalEdits: false))
            #expect(rebase.state(local: .draft, pulled: state) == state)
        }
    }

    @Test func unsentEditsStayOnTopAndKeepTheirFormVersion() {
        let rebase = DeviceSync.rebase(pulledState: .submitted, under: DeviceSync.PendingWork(edits: true))
        #expect(rebase.keepsLocalEdits && rebase.keepsLocalFormVersion)
        #expect(rebase.state(local: .draft, pulled: .submitted) == .submitted, "an edit does not hold back another device's submit")
    }

    @Test func anUnsentSubmitOrDeleteKeepsTheLocalState() {
        let rebase = DeviceSync.rebase(pulledState: .draft, under: DeviceSync.PendingWork(stateChange: true))
        #expect(rebase.state(local: .submitted, pulled: .draft) == .submitted)
        #expect(rebase.state(local: .deleted, pulled: .draft) == .deleted)
    }

    @Test func anUnsentEditOfARecordDeletedElsewhereKeepsItUntilThePushRestoresIt() {
        let rebase = DeviceSync.rebase(pulledState: .deleted, under: DeviceSync.PendingWork(edits: true))
        #expect(rebase.state(local: .draft, pulled: .deleted) == .draft)
        let nothingTyped = DeviceSync.rebase(pulledState: .deleted, under: DeviceSync.PendingWork(inFlight: true))
        #expect(nothingTyped.state(local: .draft, pulled: .deleted) == .deleted)
    }

    @Test func anUnacknowledgedPushKeepsItsEditsUntilTheOutcomeArrives() {
        let rebase = DeviceSync.rebase(pulledState: .draft, under: DeviceSync.PendingWork(inFlight: true))
        #expect(rebase.keepsLocalEdits)
        #expect(!rebase.keepsLocalFormVersion)
    }

    @Test func onlyANewerRevisionIsApplied() {
        #expect(DeviceSync.isNewer(pulledRevision: 4, than: 3))
        #expect(!DeviceSync.isNewer(pulledRevision: 3, than: 3))
        #expect(!DeviceSync.isNewer(pulledRevision: 2, than: 3))
    }
}

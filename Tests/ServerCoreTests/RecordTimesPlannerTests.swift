import Foundation
import FormModel
import Testing
import SyncCore
@testable import ServerCore
@testable import ServerStorage

/// The times the push planner gives a record from a device's mutation: the author's, within reason.
struct RecordTimesPlannerTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func mutation(_ times: RecordTimes, state: RecordState = .submitted) -> Mutation {
        Mutation(mutationID: "m", recordID: UUID(), form: FormKey(id: "job", version: 1), state: state, changes: [:], times: times)
    }

    func stored(_ times: RecordTimes, state: RecordState) -> StoredRecord {
        StoredRecord(
            id: UUID(), form: FormKey(id: "job", version: 1), state: state, authorID: 1, authorName: "ana", shared: state == .submitted,
            revision: 1, sequence: 1, times: times, fields: RecordFields())
    }

    @Test func aNewRecordTakesTheDevicesTimes() {
        let made = now.addingTimeInterval(-3600)
        let times = PushPlanner.times(
            after: nil, mutation: mutation(RecordTimes(created: made, updated: made.addingTimeInterval(60), submitted: made.addingTimeInterval(90))),
            submitted: true, now: now)
        #expect(times == RecordTimes(created: made, updated: made.addingTimeInterval(60), submitted: made.addingTimeInterval(90)))
    }

    @Test func aDeviceThatSaysNothingGetsTheServersClock() {
        #expect(PushPlanner.times(after: nil, mutation: mutation(RecordTimes()), submitted: true, now: now) == RecordTimes(created: now, updated: now, submitted: now))
        #expect(PushPlanner.times(after: nil, mutation: mutation(RecordTimes(), state: .draft), submitted: false, now: now) == RecordTimes(created: now, updated: now))
    }

    @Test func creationStaysAndTheLatestChangeWins() {
        let first = now.addingTimeInterval(-7200)
        let current = stored(RecordTimes(created: first, updated: now.addingTimeInterval(-60), submitted: first), state: .submitted)
        // An older offline edit arriving late does not move the record's last change back; nor its creation.
        let late = PushPlanner.times(
            after: current, mutation: mutation(RecordTimes(created: now, updated: now.addingTimeInterval(-600))), submitted: true, now: now)
        #expect(late == RecordTimes(created: first, updated: now.addingTimeInterval(-60), submitted: first))
        // A resubmission says when it happened.
        let again = PushPlanner.times(
            after: current, mutation: mutation(RecordTimes(updated: now.addingTimeInterval(-5), submitted: now.addingTimeInterval(-5))), submitted: true, now: now)
        #expect(again.submitted == now.addingTimeInterval(-5) && again.updated == now.addingTimeInterval(-5))
    }

    @Test func aClockFarAheadIsTakenAsTheLimit() {
        let future = now.addingTimeInterval(365 * 86_400)
        let times = PushPlanner.times(
            after: nil, mutation: mutation(RecordTimes(created: future, updated: future, submitted: future)), submitted: true, now: now)
        let limit = now.addingTimeInterval(300)
        #expect(times == RecordTimes(created: limit, updated: limit, submitted: limit))
    }
}

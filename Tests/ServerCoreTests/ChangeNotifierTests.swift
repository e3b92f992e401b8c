@testable import ServerCore
import FieldSheetTesting
import ServerStorage
import Testing

/// The notifier alone: who is woken by which announcement, and what a wait costs when it ends otherwise.
struct ChangeNotifierTests {
    @Test func anAnnouncementPastTheSeenPositionWakesTheWaiterAtOnce() async {
        let notifier = ChangeNotifier()
        let waiting = Task { await notifier.wait(projectID: 1, past: 5, until: .now + .seconds(60)) }
        #expect(await eventually { notifier.waiting == 1 })
        notifier.notify(projectID: 2, lastSequence: 9)  // another project
        notifier.notify(projectID: 1, lastSequence: 5)  // nothing new
        #expect(notifier.waiting == 1)
        notifier.notify(projectID: 1, lastSequence: 6)
        #expect(await waiting.value)
        #expect(notifier.waiting == 0)
    }

    @Test func aCommitAnnouncedBeforeTheWaitBeganIsNotMissed() async {
        let notifier = ChangeNotifier()
        notifier.notify(projectID: 1, lastSequence: 7)
        #expect(await notifier.wait(projectID: 1, past: 6, until: .now + .seconds(60)))
        #expect(notifier.waiting == 0)
    }

    @Test func aWaitEndsAtItsDeadlineAndLeavesNothingBehind() async {
        let notifier = ChangeNotifier()
        #expect(await notifier.wait(projectID: 1, past: 0, until: .now + .milliseconds(20)) == false)
        #expect(notifier.waiting == 0)
    }

    @Test func aCancelledWaitEndsAndLeavesNothingBehind() async {
        let notifier = ChangeNotifier()
        let waiting = Task { await notifier.wait(projectID: 1, past: 0, until: .now + .seconds(60)) }
        #expect(await eventually { notifier.waiting == 1 })
        waiting.cancel()
        #expect(await waiting.value == false)
        #expect(notifier.waiting == 0)
    }

    @Test func wakeAllSendsEveryWaiterToLookAgain() async {
        let notifier = ChangeNotifier()
        let first = Task { await notifier.wait(projectID: 1, past: 3, until: .now + .seconds(60)) }
        let second = Task { await notifier.wait(projectID: 2, past: 3, until: .now + .seconds(60)) }
        #expect(await eventually { notifier.waiting == 2 })
        notifier.wakeAll()
        #expect(await first.value)
        #expect(await second.value)
    }

    /// With a poll (a second process on the same SQLite file), a commit nobody announced is found by
    /// reading the counter, once per interval for the project however many wait on it.
    @Test func aPollFindsACommitNobodyAnnounced() async {
        let reads = Counter()
        let notifier = ChangeNotifier(poll: .init(interval: .milliseconds(10)) { _ in
            await reads.increment()
            return await reads.value >= 3 ? 4 : 3
        })
        async let one = notifier.wait(projectID: 1, past: 3, until: .now + .seconds(60))
        async let two = notifier.wait(projectID: 1, past: 3, until: .now + .seconds(60))
        #expect(await one)
        #expect(await two)
        #expect(await reads.value == 3, "one read per interval for the project, not one per waiter")
        #expect(await eventually { notifier.waiting == 0 })
    }

    @Test func theFirstWaitIsReportedToWhoeverWaitsForIt() async {
        let notifier = ChangeNotifier()
        let watcher = Task { await notifier.untilFirstWait(); return true }
        let waiting = Task { await notifier.wait(projectID: 1, past: 0, until: .now + .seconds(60)) }
        #expect(await watcher.value)
        await notifier.untilFirstWait()  // at once, now
        waiting.cancel()
        #expect(await waiting.value == false)
    }

    actor Counter {
        var value = 0
        func increment() { value += 1 }
    }
}

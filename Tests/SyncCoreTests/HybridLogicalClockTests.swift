import Testing
@testable import SyncCore

struct HybridLogicalClockTests {
    @Test func readingsFollowTheWallClockWhenItMovesForward() {
        var clock = HybridLogicalClock()
        #expect(clock.tick(wallMillis: 1_000) == HybridTimestamp(millis: 1_000, counter: 0))
        #expect(clock.tick(wallMillis: 2_000) == HybridTimestamp(millis: 2_000, counter: 0))
    }

    @Test func readingsNeverGoBackwardsWhenTheWallClockDoes() {
        var clock = HybridLogicalClock()
        let first = clock.tick(wallMillis: 5_000)
        let second = clock.tick(wallMillis: 4_000)
        let third = clock.tick(wallMillis: 5_000)
        #expect(first < second)
        #expect(second < third)
        #expect(third == HybridTimestamp(millis: 5_000, counter: 2))
    }

    @Test func aFullCounterCarriesIntoTheNextMillisecond() {
        var clock = HybridLogicalClock(last: HybridTimestamp(millis: 10, counter: .max))
        #expect(clock.tick(wallMillis: 10) == HybridTimestamp(millis: 11, counter: 0))
    }

    @Test func observingARemoteReadingMovesTheClockPastIt() {
        var clock = HybridLogicalClock()
        _ = clock.tick(wallMillis: 1_000)
        let clamped = clock.observe(HybridTimestamp(millis: 3_000, counter: 7), wallMillis: 1_000)
        #expect(!clamped)
        #expect(clock.tick(wallMillis: 1_000) == HybridTimestamp(millis: 3_000, counter: 8))
    }

    @Test func aRemoteReadingFarAheadIsClamped() {
        var clock = HybridLogicalClock(maximumDriftMillis: 60_000)
        let clamped = clock.observe(HybridTimestamp(millis: 10_000_000, counter: 0), wallMillis: 1_000)
        #expect(clamped)
        #expect(clock.last == HybridTimestamp(millis: 61_000, counter: 0))
        #expect(clock.clamp(HybridTimestamp(millis: 10_000_000, counter: 0), wallMillis: 1_000) == HybridTimestamp(millis: 61_000, counter: 0))
    }

    @Test func packedValueOrdersLikeMillisThenCounter() throws {
        let early = HybridTimestamp(millis: 1_732_280_000_000, counter: 65_535)
        let late = HybridTimestamp(millis: 1_732_280_000_001, counter: 0)
        #expect(early < late)
        #expect(early.millis == 1_732_280_000_000)
        #expect(early.counter == 65_535)
    }
}

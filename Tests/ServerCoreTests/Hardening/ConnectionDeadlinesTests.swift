@testable import ServerCore
import Testing

/// The slow-client rules on their own, on a clock the test moves.
struct ConnectionDeadlinesTests {
    typealias Deadlines = ConnectionDeadlines<ContinuousClock.Instant>
    let start = ContinuousClock.now

    func deadlines() -> Deadlines {
        Deadlines(headerTimeout: .seconds(10), bodyTimeout: .seconds(20), bodyMinBytesPerSecond: 500, idleTimeout: .seconds(60), sendTimeout: .seconds(30), now: start)
    }

    @Test func aConnectionThatSendsNothingExpiresAtTheHeaderTimeout() {
        let connection = deadlines()
        #expect(connection.expired(now: start + .seconds(9.9)) == nil)
        #expect(connection.expired(now: start + .seconds(10)) == .header)
    }

    @Test func trickledHeaderBytesDoNotExtendTheHeaderTimeout() {
        var connection = deadlines()
        for second in 1...9 { connection.bytesArrived(now: start + .seconds(second)) }
        #expect(connection.expired(now: start + .seconds(10)) == .header)
    }

    @Test func theBodyTimeoutGrowsWithTheBytesReceivedAtTheMinimumRate() {
        var connection = deadlines()
        connection.headReceived(now: start + .seconds(1))
        #expect(connection.expired(now: start + .seconds(21)) == .body)
        connection.bodyReceived(bytes: 5_000)  // ten more seconds at 500 bytes/s
        #expect(connection.expired(now: start + .seconds(30)) == nil)
        #expect(connection.expired(now: start + .seconds(31)) == .body)
    }

    @Test func noDeadlineWhileTheServerResponds() {
        var connection = deadlines()
        connection.headReceived(now: start)
        connection.bodyEnded()
        #expect(connection.deadline == nil)
        #expect(connection.expired(now: start + .seconds(3_600)) == nil)
    }

    @Test func aKeptAliveConnectionIdlesThenTheNextRequestGetsTheHeaderTimeout() {
        var connection = deadlines()
        connection.headReceived(now: start)
        connection.bodyEnded()
        connection.responseEnded(now: start + .seconds(1))
        #expect(connection.expired(now: start + .seconds(60)) == nil)
        #expect(connection.expired(now: start + .seconds(61)) == .idle)
        connection.bytesArrived(now: start + .seconds(30))
        #expect(connection.expired(now: start + .seconds(39)) == nil)
        #expect(connection.expired(now: start + .seconds(40)) == .header)
    }

    @Test func aResponseSentBeforeTheBodyEndedLeavesTheBodyUnread() {
        var connection = deadlines()
        connection.headReceived(now: start)
        connection.responseEnded(now: start + .seconds(1))
        #expect(!connection.bodyComplete)
        #expect(connection.deadline?.expiry == .body)
    }

    @Test func pipelinedRequestsGoIdleOnlyAfterTheLastResponse() {
        var connection = deadlines()
        connection.headReceived(now: start)
        connection.bodyEnded()
        connection.headReceived(now: start)
        connection.bodyEnded()
        connection.responseEnded(now: start + .seconds(1))
        #expect(connection.deadline == nil)
        connection.responseEnded(now: start + .seconds(2))
        #expect(connection.deadline?.expiry == .idle)
    }

    @Test func aClientThatStopsReadingIsCutOffAfterTheSendTimeoutWhateverThePhase() {
        var connection = deadlines()
        connection.headReceived(now: start)
        connection.bodyEnded()
        connection.writabilityChanged(writable: false, now: start + .seconds(1))
        #expect(connection.expired(now: start + .seconds(30)) == nil)
        #expect(connection.expired(now: start + .seconds(31)) == .send)
        connection.writabilityChanged(writable: true, now: start + .seconds(20))
        #expect(connection.deadline == nil)
    }
}

import Foundation
@testable import ServerCore
import ServerStorage
import Testing

/// The delivery service's in-memory queues (pure, no database): what a push hands over waits for its endpoint's
/// free slot in order, even when every slot is taken, until the endpoint's queue is full; only then is the
/// endpoint busy, and only that endpoint.
struct WebhookDeliveryStateTests {
    static let options = WebhookOptions(batchSize: 2, batchesInFlightPerEndpoint: 1, queuedPerEndpoint: 4)

    static func delivery(_ id: Int64, endpoint: Int64, until: Date) -> ClaimedWebhookDelivery {
        ClaimedWebhookDelivery(
            id: id, endpointID: endpoint, url: "http://127.0.0.1/\(endpoint)", secret: "s", eventID: "e\(id)", kind: .recordSubmitted,
            body: "{}", attempts: 0, claimedUntil: until)
    }

    static func delivered(at now: Date) -> WebhookAttempt {
        WebhookAttempt(delivered: true, status: 200, error: nil, responseMillis: 1, at: now, retryAt: nil)
    }

    @Test func handOversBehindAFullEndpointWaitInItsQueueUntilTheQueueIsFull() {
        let now = Date()
        let until = now.addingTimeInterval(60)
        let state = DeliveryState()
        state.enqueue((1...5).map { Self.delivery($0, endpoint: 1, until: until) } + [Self.delivery(6, endpoint: 2, until: until)])
        let first = state.startDeliveries(options: Self.options, now: now)
        #expect(first.filter { $0.endpointID == 1 }.map(\.id) == [1, 2], "the endpoint's two slots, oldest first")
        #expect(first.filter { $0.endpointID == 2 }.map(\.id) == [6])
        // Every slot of endpoint 1 is taken and three wait: it still takes hand-overs.
        #expect(state.busy(options: Self.options).isEmpty)
        state.enqueue([Self.delivery(7, endpoint: 1, until: until)])
        #expect(state.busy(options: Self.options) == [1], "four waiting: the queue is full")
        #expect(state.takeTurn(poll: true, options: Self.options).busy == [1], "the claim leaves only that endpoint out")
        #expect(state.startDeliveries(options: Self.options, now: now).isEmpty, "no slot is free")

        // A delivery ends: the next of its endpoint starts, in the order handed over.
        state.finished(1, outcome: (1, Self.delivered(at: now)))
        #expect(state.startDeliveries(options: Self.options, now: now).map(\.id) == [3])
        #expect(state.busy(options: Self.options).isEmpty)
        let turn = state.takeTurn(poll: false, options: Self.options)
        #expect(turn.outcomes.map(\.id) == [1] && turn.claim, "a delivered event may free its record's next one: claim")
    }

    @Test func aQueuedDeliveryWhoseClaimRunsShortIsGivenBackNotSent() {
        let now = Date()
        let state = DeliveryState()
        state.enqueue([Self.delivery(1, endpoint: 1, until: now.addingTimeInterval(1)), Self.delivery(2, endpoint: 1, until: now.addingTimeInterval(60))])
        #expect(state.startDeliveries(options: Self.options, now: now).map(\.id) == [2])
        #expect(state.takeTurn(poll: false, options: Self.options).releases == [1])
    }

    @Test func stoppingGivesBackWhatIsQueued() {
        let now = Date()
        let state = DeliveryState()
        state.enqueue((1...4).map { Self.delivery($0, endpoint: 1, until: now.addingTimeInterval(60)) })
        #expect(state.startDeliveries(options: Self.options, now: now).map(\.id) == [1, 2])
        state.stop()
        #expect(state.takeTurn(poll: true, options: Self.options).releases.sorted() == [3, 4])
        #expect(!state.done, "two deliveries are still under way")
        state.finished(1, outcome: (1, Self.delivered(at: now)))
        state.finished(1, outcome: (2, Self.delivered(at: now)))
        #expect(state.takeTurn(poll: false, options: Self.options).outcomes.count == 2)
        #expect(state.done)
    }
}

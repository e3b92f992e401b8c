import FormModel
/// `POST /v1/projects/{project}/push`: a batch of mutations from one device.
public struct PushRequest: Codable, Sendable, Hashable {
    /// The device that made the mutations; outcomes are kept per `(clientId, mutationId)`.
    public var clientID: String
    /// The device's clock when it sent the batch (optional); moves the server's clock forward.
    public var clock: HybridTimestamp?
    public var mutations: [Mutation]

    private enum CodingKeys: String, CodingKey {
        case clientID = "clientId", clock, mutations
    }

    public init(clientID: String, clock: HybridTimestamp? = nil, mutations: [Mutation]) {
        self.clientID = clientID
        self.clock = clock
        self.mutations = mutations
    }
}

/// The answer to a push: one outcome per mutation, in the order they were sent.
public struct PushResponse: Codable, Sendable, Hashable {
    public var outcomes: [MutationOutcome]
    /// The server's hybrid logical clock; the device observes it.
    public var serverClock: HybridTimestamp

    public init(outcomes: [MutationOutcome], serverClock: HybridTimestamp) {
        self.outcomes = outcomes
        self.serverClock = serverClock
    }
}

import FormModel

/// `POST /v1/projects/{project}/push`: a batch of mutations from one device.
///
/// Its one codec is the byte codec: ``jsonBytes()`` writes the body (each mutation in its canonical form) and
/// ``init(jsonBytes:maximumMutations:)`` reads one, both held to the `PushRequest` schema of
/// `Schema/openapi.yaml` by the wire contract tests. The server reads a body with ``ReadPushRequest``, which
/// also keeps where each mutation was in the bytes; a device writes its signed bodies from its stored
/// mutation bytes.
public struct PushRequest: Sendable, Hashable {
    /// The device that made the mutations; outcomes are kept per `(clientId, mutationId)`.
    public var clientID: String
    /// The device's clock when it sent the batch (optional); moves the server's clock forward.
    public var clock: HybridTimestamp?
    public var mutations: [Mutation]

    public init(clientID: String, clock: HybridTimestamp? = nil, mutations: [Mutation]) {
        self.clientID = clientID
        self.clock = clock
        self.mutations = mutations
    }
}

/// The answer to a push: one outcome per mutation, in the order they were sent.
///
/// Its one codec is the byte codec: ``init(jsonBytes:)`` reads it and ``jsonBytes(recordIDsAsSent:)`` writes it,
/// held to the `PushResponse` schema of `Schema/openapi.yaml` by the wire contract tests.
public struct PushResponse: Sendable, Hashable {
    public var outcomes: [MutationOutcome]
    /// The server's hybrid logical clock; the device observes it.
    public var serverClock: HybridTimestamp

    public init(outcomes: [MutationOutcome], serverClock: HybridTimestamp) {
        self.outcomes = outcomes
        self.serverClock = serverClock
    }
}

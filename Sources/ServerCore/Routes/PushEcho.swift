import Foundation
import SyncCore

/// A push body as decoded, with each mutation's `recordId` exactly as the device wrote it (any case): the
/// outcomes echo those texts, so a client comparing ids as strings finds its own.
struct PushBody: Decodable {
    var request: PushRequest
    /// One per mutation, in order.
    var recordIdsAsSent: [String]

    private enum Key: String, CodingKey { case mutations }
    private struct SentId: Decodable { var recordId: String }

    init(from decoder: any Decoder) throws {
        request = try PushRequest(from: decoder)
        // A second look at the tree the decoder already holds: the body is not parsed again.
        recordIdsAsSent = try decoder.container(keyedBy: Key.self).decode([SentId].self, forKey: .mutations).map(\.recordId)
    }
}

/// The push answer, each outcome's `recordId` as its mutation's was sent.
struct EchoedPushResponse: Encodable {
    var response: PushResponse
    var recordIdsAsSent: [String]

    private enum Key: String, CodingKey { case outcomes, serverClock }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        var outcomes = container.nestedUnkeyedContainer(forKey: .outcomes)
        for (index, outcome) in response.outcomes.enumerated() {
            // One outcome per mutation, in order; the text is used only if it names the same record.
            let sent = index < recordIdsAsSent.count ? recordIdsAsSent[index] : nil
            let text = sent.flatMap { UUID(uuidString: $0) == outcome.recordId ? $0 : nil } ?? outcome.recordId.uuidString.lowercased()
            try outcomes.encode(EchoedOutcome(outcome: outcome, recordId: text))
        }
        try container.encode(response.serverClock, forKey: .serverClock)
    }
}

/// One outcome as stored, its `recordId` replaced by the text given.
private struct EchoedOutcome: Encodable {
    var outcome: MutationOutcome
    var recordId: String

    private enum Key: String, CodingKey { case recordId }

    func encode(to encoder: any Encoder) throws {
        try outcome.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(recordId, forKey: .recordId)
    }
}

import Foundation
import FormModel
import ServerStorage
import SyncCore

/// `POST …/records/{recordId}/review`.
struct ReviewRequest: Decodable, Sendable {
    var state: String
    var comment: String?
}

/// `POST …/conflicts/{conflictId}/resolve`.
struct ResolveRequest: Decodable, Sendable {
    /// `server` or `client`: whose value the record keeps.
    var keep: String
}

/// `GET …/records/{recordId}/history`.
struct HistoryResponse: Encodable, Sendable {
    struct Entry: Encodable, Sendable {
        var revision: Int64
        var kind: HistoryEntry.Kind
        var user: String
        var device: String?
        var at: String
        /// The form version a device's change was made against.
        var version: Int?
        var state: HistoryDetail.StateDiff?
        var fields: [String: HistoryDetail.FieldDiff]
        var review: HistoryDetail.ReviewDiff?
        var resolution: HistoryDetail.Resolution?
    }

    var recordID: String
    var history: [Entry]

    private enum CodingKeys: String, CodingKey {
        case recordID = "recordId", history
    }

    init(recordID: UUID, entries: [HistoryEntry]) {
        self.recordID = recordID.lowercased
        history = entries.map { entry in
            Entry(
                revision: entry.revision, kind: entry.kind, user: entry.userName, device: entry.clientID, at: Timestamp.string(entry.at),
                version: entry.detail.version, state: entry.detail.state, fields: entry.detail.fields, review: entry.detail.review, resolution: entry.detail.resolution)
        }
    }
}

/// One entry of `GET …/conflicts`.
struct ConflictView: Encodable, Sendable {
    struct Side: Encodable, Sendable {
        var value: AnswerValue?
        var revision: Int64
        var hlc: HybridTimestamp
        var device: String
        var author: String?

        init?(_ state: FieldState?, author: String?) {
            guard let state else { return nil }
            value = state.value
            revision = state.revision
            hlc = state.hlc
            device = state.clientID
            self.author = author
        }

        enum CodingKeys: String, CodingKey { case value, revision, hlc, device, author }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(value, forKey: .value)  // null: the side held no answer
            try container.encode(revision, forKey: .revision)
            try container.encode(hlc, forKey: .hlc)
            try container.encode(device, forKey: .device)
            try container.encodeIfPresent(author, forKey: .author)
        }
    }

    struct Resolution: Encodable, Sendable {
        var kept: ConflictEntry.Winner
        var by: String
        var at: String
    }

    var id: Int64
    var recordID: String
    var formID: String
    var fieldID: String?
    var kind: ConflictEntry.Kind
    var policy: ConflictPolicy
    var winner: ConflictEntry.Winner
    var open: Bool
    var createdAt: String
    var mutationID: String
    var server: Side?
    var client: Side?
    var resolution: Resolution?

    private enum CodingKeys: String, CodingKey {
        case id, recordID = "recordId", formID = "formId", fieldID = "fieldId", kind, policy, winner, open, createdAt, mutationID = "mutationId", server, client, resolution
    }

    init(_ entry: ConflictLogEntry) {
        id = entry.id
        recordID = entry.recordID.lowercased
        formID = entry.formID
        fieldID = entry.entry.fieldID
        kind = entry.entry.kind
        policy = entry.entry.policy
        winner = entry.entry.winner
        open = entry.open
        createdAt = Timestamp.string(entry.createdAt)
        mutationID = entry.mutationID
        server = Side(entry.entry.server, author: entry.serverAuthor)
        client = Side(entry.entry.client, author: entry.clientAuthor)
        resolution = entry.resolution.map { Resolution(kept: $0.kept, by: $0.by, at: Timestamp.string($0.at)) }
    }
}

/// `GET …/conflicts`.
struct ConflictList: Encodable, Sendable {
    var conflicts: [ConflictView]
    /// Pass as `after` for the next page; absent on the last page.
    var next: Int64?
}

/// Times as the API writes them: RFC 3339 in UTC with milliseconds.
enum Timestamp {
    static func string(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

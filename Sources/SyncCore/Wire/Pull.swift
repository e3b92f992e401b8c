import FormModel
import Foundation

/// One record as the server holds it, as sent in a pull page and by `GET …/records/{id}`.
public struct RecordSnapshot: Codable, Sendable, Hashable {
    public var recordId: UUID
    public var formId: String
    public var formVersion: Int
    public var state: RecordState
    /// Increases with every applied change to the record.
    public var revision: Int64
    /// The position of the record's latest change in the project's change feed.
    public var sequence: Int64
    /// The user who created the record.
    public var author: String
    /// The record's review state and latest review comment; nil for records never submitted.
    public var review: RecordReview?
    /// When the record was created, last changed and last submitted, where that happened (``RecordTimes``).
    public var times: RecordTimes
    /// The record's fields with their merge metadata (``RecordFields``).
    public var fields: RecordFields

    public init(
        recordId: UUID, formId: String, formVersion: Int, state: RecordState, revision: Int64, sequence: Int64, author: String,
        review: RecordReview? = nil, times: RecordTimes = RecordTimes(), fields: RecordFields
    ) {
        self.recordId = recordId
        self.formId = formId
        self.formVersion = formVersion
        self.state = state
        self.revision = revision
        self.sequence = sequence
        self.author = author
        self.review = review
        self.times = times
        self.fields = fields
    }
}

/// `GET /v1/projects/{project}/changes?after=CURSOR`: the records changed after a cursor, in commit order.
public struct PullPage: Codable, Sendable, Hashable {
    /// The latest state of each record that changed, ordered by `sequence`.
    public var changes: [RecordSnapshot]
    /// Pass as `after` to get the next page; store it with the applied page.
    public var cursor: Int64
    /// Whether more changes follow right away.
    public var hasMore: Bool
    public var serverClock: HybridTimestamp

    public init(changes: [RecordSnapshot], cursor: Int64, hasMore: Bool, serverClock: HybridTimestamp) {
        self.changes = changes
        self.cursor = cursor
        self.hasMore = hasMore
        self.serverClock = serverClock
    }
}

import Foundation
import FormModel

/// Where a submitted record stands in the office's review.
///
/// `received` when it is first submitted; reviewers and admins move it to `hasIssues`, `approved` or
/// `rejected` (with an optional comment); an edit of a `hasIssues` or `rejected` record moves it to
/// `edited`, ready to be looked at again. Drafts have no review state.
public enum ReviewState: String, Codable, Sendable, Hashable, CaseIterable {
    case received
    case hasIssues
    case approved
    case rejected
    case edited

    /// The states a reviewer may set (the others follow from what the collector does).
    public static let settable: [ReviewState] = [.hasIssues, .approved, .rejected]

    /// Whether the collector is asked to change the record.
    public var needsChanges: Bool { self == .hasIssues || self == .rejected }

    /// The state in words, as a person reads it on a device: `has issues`, never the code `hasIssues`.
    public var words: String {
        switch self {
        case .received: "received"
        case .hasIssues: "has issues"
        case .approved: "approved"
        case .rejected: "rejected"
        case .edited: "edited"
        }
    }
}

/// A record's review: its state and the latest reviewer's comment. Travels with the record on pull.
public struct RecordReview: Codable, Sendable, Hashable {
    public var state: ReviewState
    /// The comment of the latest review that set the state (nil when none was given).
    public var comment: String?

    public init(state: ReviewState, comment: String? = nil) {
        self.state = state
        self.comment = comment
    }

    /// The review on one line as the collector reads it, in words: `sent back (has issues): <comment>` for a
    /// record sent back, else the state and any comment. `shown` prepares the comment for where it is printed.
    public func display(comment shown: (String) -> String = { $0 }) -> String {
        let comment = self.comment.map { ": " + shown($0) } ?? ""
        return (state.needsChanges ? "sent back (\(state.words))" : state.words) + comment
    }
}

extension ReviewState {
    static func read(from reader: inout JSONReader) throws -> ReviewState {
        let text = try reader.readString()
        guard let state = ReviewState(rawValue: text) else {
            throw reader.error("review state must be one of \(ReviewState.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(text)\"")
        }
        return state
    }
}

extension RecordReview {
    /// Reads `{"state": …, "comment": …}` (comment optional or null).
    public static func read(from reader: inout JSONReader) throws -> RecordReview {
        var state: ReviewState?
        var comment: String?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "state": state = try ReviewState.read(from: &reader)
            case "comment": comment = try reader.readNull() ? nil : try reader.readString()
            default: try reader.skipValue()
            }
        }
        guard let state else { throw reader.error("A review needs a state") }
        return RecordReview(state: state, comment: comment)
    }

    /// Writes the shape `Codable` writes: the comment only when there is one.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("state")
        writer.string(state.rawValue)
        if let comment {
            writer.key("comment")
            writer.string(comment)
        }
        writer.endObject()
    }
}

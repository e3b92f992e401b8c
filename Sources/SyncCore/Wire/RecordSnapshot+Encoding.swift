import FormModel
import Foundation

extension RecordSnapshot {
    private enum Key: String, CodingKey {
        case recordId, formId, formVersion, state, revision, sequence, author, review, createdAt, updatedAt, submittedAt, fields
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        recordId = try container.decode(UUID.self, forKey: .recordId)
        formId = try container.decode(String.self, forKey: .formId)
        formVersion = try container.decode(Int.self, forKey: .formVersion)
        state = try container.decode(RecordState.self, forKey: .state)
        revision = try container.decode(Int64.self, forKey: .revision)
        sequence = try container.decode(Int64.self, forKey: .sequence)
        author = try container.decode(String.self, forKey: .author)
        review = try container.decodeIfPresent(RecordReview.self, forKey: .review)
        times = try RecordTimes(from: container)
        fields = try container.decode(RecordFields.self, forKey: .fields)
    }

    /// Encodes the record's id in canonical lowercase (as the contract, Schema/openapi.yaml, says of
    /// pulled and fetched records), not in the uppercase of `UUID.uuidString`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(recordId.uuidString.lowercased(), forKey: .recordId)
        try container.encode(formId, forKey: .formId)
        try container.encode(formVersion, forKey: .formVersion)
        try container.encode(state, forKey: .state)
        try container.encode(revision, forKey: .revision)
        try container.encode(sequence, forKey: .sequence)
        try container.encode(author, forKey: .author)
        try container.encodeIfPresent(review, forKey: .review)
        try times.encode(to: &container)
        try container.encode(fields, forKey: .fields)
    }
}

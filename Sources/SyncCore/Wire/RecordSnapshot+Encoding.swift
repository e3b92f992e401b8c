import Foundation

extension RecordSnapshot {
    private enum Key: String, CodingKey {
        case recordId, formId, formVersion, state, revision, sequence, author, review, fields
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
        try container.encode(fields, forKey: .fields)
    }
}

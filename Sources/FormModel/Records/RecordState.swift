/// Where a record is in its life: a private draft, a submission shared with the project, or a tombstone.
/// The same on the device, on the wire and on the server.
public enum RecordState: String, Codable, Sendable, Hashable, CaseIterable {
    /// Private to its author; may hold raw input that does not fit its field yet.
    case draft
    /// Completed and validated; shared with the project's reviewers.
    case submitted
    /// A tombstone: the record was deleted; its values are kept so an edit after delete can restore it.
    case deleted
}

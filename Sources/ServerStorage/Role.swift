/// What a member may do in a project.
public enum Role: String, Codable, Sendable, CaseIterable {
    /// Sees and changes only the records they created.
    case collector
    /// Also sees every submitted record of the project and may edit it.
    case reviewer
    /// A reviewer who also publishes forms.
    case admin

    /// Whether the role sees the project's submitted records, not only its own.
    public var seesSharedRecords: Bool { self != .collector }
    /// Whether the role may publish forms.
    public var publishesForms: Bool { self == .admin }
}

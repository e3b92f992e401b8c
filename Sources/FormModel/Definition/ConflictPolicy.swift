/// What the server does when two sides changed the same field differently since their common base.
///
/// Whatever the policy, the losing value is written to the conflict log with both sides.
public enum ConflictPolicy: String, Codable, Sendable, CaseIterable {
    /// The later write by hybrid logical clock wins; ties go to the greater device id.
    case lastWriterWins
    /// The value already on the server stays.
    case serverWins
    /// The incoming value from the device wins.
    case clientWins
    /// The server value stays and a conflict is opened for a person to resolve.
    case manual
}

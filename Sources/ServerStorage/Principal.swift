/// The authenticated user of a request and the projects they belong to.
public struct Principal: Sendable, Hashable {
    /// A project the user is a member of, with their role in it.
    public struct Membership: Sendable, Hashable {
        public var projectID: Int64
        public var projectName: String
        public var role: Role

        public init(projectID: Int64, projectName: String, role: Role) {
            self.projectID = projectID
            self.projectName = projectName
            self.role = role
        }
    }

    public var userID: Int64
    public var userName: String
    /// Memberships keyed by project name.
    public var memberships: [String: Membership]
    /// Whether the user administers the server: creates projects and reads every project's audit log.
    public var isServerAdmin: Bool
    /// The access token (and so the device) the request came with; nil for a console session.
    public var tokenID: Int64?
    /// The device row of that token; nil for a console session.
    public var deviceID: Int64?
    /// The device's Ed25519 public key (base64 of its 32 raw bytes) kept with the token; nil when the device has
    /// registered none (docs/signed-submissions.md): then its pushes need no signatures.
    public var devicePublicKey: String?

    public init(userID: Int64, userName: String, memberships: [String: Membership], isServerAdmin: Bool = false, tokenID: Int64? = nil) {
        self.userID = userID
        self.userName = userName
        self.memberships = memberships
        self.isServerAdmin = isServerAdmin
        self.tokenID = tokenID
    }
}

import Foundation

/// People, their devices and one-time login codes: what a project admin manages from the console, and the
/// server admin's flag.
///
/// A device is the holder of one access token: revoking the device revokes its token (and the console sessions
/// opened with it) at once, on every server instance, because every request looks its token up.
public protocol PeopleStorage: Sendable {
    /// Makes the user a server admin (creating the user when new), or no longer one.
    func setServerAdmin(userName: String, _ isAdmin: Bool) async throws
    /// Stores a new access token for the user (created when new) on a device row of its own, enrolled for
    /// `projectId` when given (a server admin's token may belong to no project).
    func addToken(userName: String, projectID: Int64?, tokenHash: Data) async throws
    /// The user with this name, when there is one.
    func userID(named name: String) async throws -> Int64?
    /// Adds the user (created when new) to the project with `role`, or sets their role there; no token is issued.
    /// Returns the user's id.
    @discardableResult
    func setMembership(userName: String, projectID: Int64, role: Role) async throws -> Int64
    /// Takes the user out of the project and revokes every device enrolled for it; returns how many devices were
    /// active. Throws ``StorageError/Code/unknownUser`` when the user is no member of the project.
    func removeMember(projectID: Int64, userID: Int64, at: Date) async throws -> Int

    /// The devices enrolled for the project (of one member, or of every member), newest first, revoked ones too.
    func devices(projectID: Int64, userID: Int64?) async throws -> [DeviceInfo]
    /// Revokes one device of the project (its token); nil when the project has no such device, the device as it
    /// was when it was active (or revoked before).
    func revokeDevice(projectID: Int64, deviceID: Int64, at: Date) async throws -> DeviceInfo?
    /// Notes what a device reported on a pull or push: its client id and version, how many changes wait on it,
    /// and the time (the first sync is kept).
    func recordDeviceSync(tokenID: Int64, report: DeviceReport) async throws
    /// Whether a token with this SHA-256 exists and was revoked (a signed-out device, not a wrong token).
    func tokenRevoked(tokenHash: Data) async throws -> Bool

    /// Stores a new login code (only its hash).
    func createLoginCode(_ code: LoginCodeRecord) async throws
    /// Exchanges a code (by its hash) for a new device with `tokenHash` as its token, in one transaction: the
    /// code must exist, not be used, not be expired at `now`, and its user must still be a member of its project.
    func redeemLoginCode(codeHash: Data, tokenHash: Data, deviceName: String, clientVersion: String?, publicKey: String?, now: Date) async throws -> LoginCodeRedemption
}

/// A device of a member: an access token with what the device last reported.
public struct DeviceInfo: Sendable, Hashable {
    /// The name of a device row made for a token that `fieldsheet-server user add` printed.
    public static let commandLineTokenName = "access token"

    public var id: Int64
    public var userID: Int64
    public var userName: String
    /// What the device called itself when it was enrolled with a login code (its host name), or
    /// ``commandLineTokenName``.
    public var name: String
    /// The device database's id (the `clientId` of its pushes), once it synced.
    public var clientID: String?
    /// The client program and version (its `User-Agent`), once it synced.
    public var clientVersion: String?
    public var createdAt: Date
    public var firstSyncAt: Date?
    public var lastSyncAt: Date?
    /// How many changes the device said it had waiting to send, at its last sync.
    public var waiting: Int?
    /// When its token was revoked; nil while it may sync.
    public var revokedAt: Date?

    public init(
        id: Int64, userID: Int64, userName: String, name: String, clientID: String?, clientVersion: String?, createdAt: Date,
        firstSyncAt: Date?, lastSyncAt: Date?, waiting: Int?, revokedAt: Date?
    ) {
        self.id = id
        self.userID = userID
        self.userName = userName
        self.name = name
        self.clientID = clientID
        self.clientVersion = clientVersion
        self.createdAt = createdAt
        self.firstSyncAt = firstSyncAt
        self.lastSyncAt = lastSyncAt
        self.waiting = waiting
        self.revokedAt = revokedAt
    }
}

/// What a device says about itself on a pull or push (`FieldSheet-Device`, `FieldSheet-Waiting`, `User-Agent`).
public struct DeviceReport: Sendable, Hashable {
    public var clientID: String?
    public var clientVersion: String?
    public var waiting: Int?
    public var at: Date

    public init(clientID: String?, clientVersion: String?, waiting: Int?, at: Date) {
        self.clientID = clientID
        self.clientVersion = clientVersion
        self.waiting = waiting
        self.at = at
    }
}

/// A login code as stored: its hash, whom it enrols, who made it, and when it expires.
public struct LoginCodeRecord: Sendable, Hashable {
    public var codeHash: Data
    public var projectID: Int64
    public var userID: Int64
    /// The admin who created it; nil for the command line.
    public var createdBy: Int64?
    public var createdAt: Date
    public var expiresAt: Date

    public init(codeHash: Data, projectID: Int64, userID: Int64, createdBy: Int64?, createdAt: Date, expiresAt: Date) {
        self.codeHash = codeHash
        self.projectID = projectID
        self.userID = userID
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// What exchanging a login code came to.
public enum LoginCodeRedemption: Sendable, Hashable {
    /// A device was enrolled: its token is the one passed in.
    case enrolled(deviceID: Int64, userID: Int64, userName: String, projectID: Int64, projectName: String)
    /// No such code.
    case unknown
    /// The code was used before (a code enrols one device).
    case used
    /// The code expired.
    case expired
    /// The code's person is no longer a member of its project.
    case notAMember
}

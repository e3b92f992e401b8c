import Foundation
import SyncCore

/// A project key as the server keeps it: the public half only, with its id and when it was made.
public struct StoredProjectKey: Sendable, Hashable {
    /// The key's id and public key, as devices receive them.
    public var key: ProjectPublicKey
    /// When `fieldsheet-server project key create` made it.
    public var createdAt: Date

    /// A stored key made at `createdAt`.
    public init(key: ProjectPublicKey, createdAt: Date) {
        self.key = key
        self.createdAt = createdAt
    }
}

/// The public halves of a project's keys for sensitive fields (docs/sensitive-fields.md). The newest is the
/// current one, which devices seal new sensitive answers to; older ones are kept, since answers sealed to them
/// keep naming their id.
public protocol ProjectKeyStorage: Sendable {
    /// Stores a new public key for the project, which becomes its current key; throws
    /// ``StorageError/Code/versionTaken`` when the project already has a key with that id.
    func addProjectKey(projectID: Int64, key: ProjectPublicKey, createdAt: Date) async throws
    /// Every key of the project, oldest first (the last is the current one).
    func projectKeys(projectID: Int64) async throws -> [StoredProjectKey]
}

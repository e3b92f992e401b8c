/// How a storage tells pulls waiting on its change feed (`GET …/changes?wait=S`) that the feed moved.
///
/// Each storage value owns one ``ChangeNotifier`` for its process: pushes through this process announce
/// their commits to it, and the storage announces what other processes commit (PostgreSQL: `LISTEN` on
/// `PostgresStorage.changeChannel`; SQLite: a read of the counter row at an interval while pulls wait).
public protocol ChangeFeedStorage: Sendable {
    /// Where waiting pulls sleep and committed pushes are announced.
    var changes: ChangeNotifier { get }
    /// The project's feed position: the highest sequence number committed (0 for none, or no such project).
    func lastSequence(projectID: Int64) async throws -> Int64
}

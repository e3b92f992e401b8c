import FieldSheetTesting
import Foundation
import GRDB
import ServerSQLite
import ServerStorage
import SyncCore
import Testing

/// The WAL's checkpoints run off the writer's path (`WALCheckpointer`): the writer's commits only ask for them,
/// and the WAL stays bounded all the same.
struct WALCheckpointTests {
    /// A storage with `bounds` in a fresh directory, a project, and the id of a member who may push to it.
    static func storage(_ directory: TemporaryDirectory, bounds: WALCheckpointer.Bounds) async throws -> (SQLiteStorage, projectID: Int64, author: Int64) {
        let storage = try SQLiteStorage(directory: directory.path, checkpoints: bounds)
        try await storage.migrate()
        let project = try await storage.createProject(name: "alpha")
        let tokenHash = Data((0..<32).map { UInt8($0) })
        try await storage.addMember(userName: "ana", projectID: project.id, role: .collector, tokenHash: tokenHash)
        let principal = try #require(try await storage.principal(tokenHash: tokenHash))
        return (storage, project.id, principal.userID)
    }

    /// Pushes `count` new records, `perPush` at a time; their ids.
    static func push(_ storage: SQLiteStorage, projectID: Int64, author: Int64, count: Int, perPush: Int) async throws -> [UUID] {
        var ids: [UUID] = []
        for _ in 0..<(count / perPush) {
            let batch = (0..<perPush).map { _ in UUID() }
            _ = try await storage.push(projectID: projectID, clientID: "d1", mutationIDs: batch.map { "m-\($0)" }, recordIDs: batch) { _ in
                var plan = PushPlan()
                for id in batch {
                    let one = GroupCommitTests.plan(id, author: author)
                    plan.outcomes += one.outcomes
                    plan.newOutcomes += one.newOutcomes
                    plan.records += one.records
                    plan.appliedCount += 1
                }
                return plan
            }
            ids += batch
        }
        return ids
    }

    /// Records in the database file alone, as the checkpoints left it: read from a copy without its WAL, taken once
    /// no checkpoint is writing the file (0 when no checkpoint has copied the records table there yet).
    static func recordsInDatabaseFile(_ directory: TemporaryDirectory, _ storage: SQLiteStorage) async throws -> Int {
        await storage.checkpoints.settled()
        let copy = TemporaryDirectory("wal-copy")
        try FileManager.default.copyItem(atPath: directory.file("fieldsheet.sqlite"), toPath: copy.file("copy.sqlite"))
        let queue = try DatabaseQueue(path: copy.file("copy.sqlite"))
        defer { try? queue.close() }
        return try await queue.read { db in
            guard try db.tableExists("records") else { return 0 }
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM records") ?? 0
        }
    }

    static func walBytes(_ directory: TemporaryDirectory) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: directory.file("fieldsheet.sqlite-wal"))[.size] as? Int) ?? 0
    }

    @Test func theWritersCommitsAskForCheckpointsThatRunOnTheirOwnConnection() async throws {
        let directory = TemporaryDirectory("wal")
        let (storage, projectID, author) = try await Self.storage(directory, bounds: .init(request: 16, limit: 1_000_000))
        let ids = try await Self.push(storage, projectID: projectID, author: author, count: 600, perPush: 20)

        // The writer never checkpointed itself; the checkpoints' connection copied the WAL into the database.
        #expect(await eventually(timeout: 60) { storage.checkpoints.statistics.complete > 0 })
        let statistics = storage.checkpoints.statistics
        #expect(statistics.byWriter == 0)
        #expect(statistics.failures == 0)
        #expect(try await Self.recordsInDatabaseFile(directory, storage) > 0, "no checkpoint reached the database file")
        for id in [ids[0], ids[299], ids[599]] {
            #expect(try await storage.record(projectID: projectID, id: id)?.fields["title"]?.value == .text("Pump \(id)"))
        }
    }

    /// The writer syncs the WAL at each commit (GRDB's WAL set-up sets NORMAL; the storage sets FULL again after it),
    /// and SQLite's own auto-checkpoint is replaced by the checkpointer's hook (SQLite then reports 0).
    @Test func theWriterSyncsEachCommitAndLeavesCheckpointsToTheHook() async throws {
        let directory = TemporaryDirectory("wal")
        let storage = try SQLiteStorage(directory: directory.path)
        try await storage.migrate()
        let (synchronous, autoCheckpoint) = try await storage.pool.write { db in
            (try Int.fetchOne(db, sql: "PRAGMA synchronous"), try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint"))
        }
        #expect(synchronous == 2, "the writer's synchronous is \(String(describing: synchronous)), not FULL (2)")
        #expect(autoCheckpoint == 0, "SQLite's auto-checkpoint is still installed (\(String(describing: autoCheckpoint)) pages)")
    }

    @Test func theWriterCheckpointsItselfAtTheLimit() async throws {
        let directory = TemporaryDirectory("wal")
        // Asked-for checkpoints never: only the limit keeps the WAL bounded.
        let bounds = WALCheckpointer.Bounds(request: 1_000_000, limit: 64)
        let (storage, projectID, author) = try await Self.storage(directory, bounds: bounds)
        let ids = try await Self.push(storage, projectID: projectID, author: author, count: 400, perPush: 10)

        let statistics = storage.checkpoints.statistics
        #expect(statistics.byWriter > 0)
        #expect(statistics.passive == 0)
        #expect(statistics.failures == 0)
        #expect(try await Self.recordsInDatabaseFile(directory, storage) > 0)
        // Started over after each complete checkpoint: never more than the limit and one push's pages.
        let walBytes = try Self.walBytes(directory)
        #expect(walBytes < 2 * Int(bounds.limit) * 4_120, "the WAL grew to \(walBytes) bytes")
        #expect(try await storage.record(projectID: projectID, id: ids[399])?.fields["title"]?.value == .text("Pump \(ids[399])"))
    }

    /// Two storages on one data directory (two server instances): each writer's commits ask for checkpoints, and
    /// each sees the other's records.
    @Test func twoStoragesOnOneDataDirectory() async throws {
        let directory = TemporaryDirectory("wal")
        let bounds = WALCheckpointer.Bounds(request: 16, limit: 2_000)
        let (first, projectID, author) = try await Self.storage(directory, bounds: bounds)
        let second = try SQLiteStorage(directory: directory.path, checkpoints: bounds)
        async let a = Self.push(first, projectID: projectID, author: author, count: 300, perPush: 10)
        async let b = Self.push(second, projectID: projectID, author: author, count: 300, perPush: 10)
        let (fromFirst, fromSecond) = try await (a, b)
        #expect(await eventually(timeout: 60) {
            first.checkpoints.statistics.passive + second.checkpoints.statistics.passive > 0
        })
        #expect(first.checkpoints.statistics.failures + second.checkpoints.statistics.failures == 0)
        for id in [fromFirst[0], fromFirst[299]] {
            #expect(try await second.record(projectID: projectID, id: id) != nil)
        }
        for id in [fromSecond[0], fromSecond[299]] {
            #expect(try await first.record(projectID: projectID, id: id) != nil)
        }
        var readOnly = Configuration()
        readOnly.readonly = true
        let queue = try DatabaseQueue(path: directory.file("fieldsheet.sqlite"), configuration: readOnly)
        defer { try? queue.close() }
        // One writer at a time across both: every record its own sequence number.
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(DISTINCT sequence) FROM records") } == 600)
    }
}

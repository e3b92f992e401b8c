import Foundation
import FormModel
import GRDB

/// The device database: forms, records with per-field values and their sync base, the snapshots of
/// open presentations, the outbox, conflicts and sync state.
///
/// One `DatabasePool` (WAL, `synchronous=FULL`, so a committed edit survives a power cut) per file for
/// the life of the store; every rule about data runs inside one `write { db in … }` transaction.
/// Several processes may open the same file; SQLite's locks serialise their writes.
///
/// ```swift
/// let store = try DraftStore(home: URL(fileURLWithPath: "/var/lib/app/fieldsheet"))
/// let session = try await store.newRecord(formID: "follow-up-job")
/// ```
public struct DraftStore: Sendable {
    /// The database file's name inside the home directory.
    public static let databaseFileName = "device.sqlite"

    /// Knobs for tests and special deployments.
    public struct Options: Sendable {
        /// Caps the database at this many pages (SQLite's `max_page_count`); a write past it fails as a
        /// full disk would. Nil (the default) leaves the file free to grow.
        public var maximumPageCount: Int?

        /// Where the device data key comes from (docs/device-encryption.md); by default the key file in the
        /// home, made with a new home.
        public var encryption: Encryption

        /// How many rows each committed batch converts when a database written in clear is encrypted.
        public var encryptionBatchSize: Int

        /// Stops the conversion of a database written in clear after this many batches, as a process killed
        /// part way would (the open then fails; the next one goes on). For tests; nil (the default) finishes.
        public var stopEncryptingAfterBatches: Int?

        /// Options for opening a store; by default the database may grow freely and is encrypted with the key
        /// file in its home.
        public init(maximumPageCount: Int? = nil, encryption: Encryption = .keyFileInHome, encryptionBatchSize: Int = 500, stopEncryptingAfterBatches: Int? = nil) {
            self.maximumPageCount = maximumPageCount
            self.encryption = encryption
            self.encryptionBatchSize = max(1, encryptionBatchSize)
            self.stopEncryptingAfterBatches = stopEncryptingAfterBatches
        }
    }

    /// Whether and with which key the values of the device database are encrypted at rest.
    public enum Encryption: Sendable {
        /// The key file `device.key` beside the database (``DeviceKeyFile``), made (mode 0600) when the
        /// database has no key yet: the default.
        case keyFileInHome
        /// The key `provider` gives (a ``DeviceKeyFile`` elsewhere, a ``DevicePassphrase``, the platform's keystore).
        case key(any DeviceKeyProvider)
        /// No encryption: values in clear, as before version 13 of the database. Refused for a database that
        /// is encrypted.
        case none
    }

    let pool: DatabasePool
    let formCache = FormCache()
    let checkpointer: Checkpointer
    /// Tells observations about commits made by other processes.
    let changeMonitor: ExternalChangeMonitor
    /// The database file.
    public let path: String
    /// The attachments' bytes, beside the database.
    let blobDirectory: BlobDirectory
    /// This device's id, made when the database was created; stamped on every change.
    public let deviceID: String
    /// Presentations a killed process had left open, closed by this open as non-cancel dismissals.
    public let recovered: [RecoveredPresentation]
    /// The cipher of this store's values (none when opened without encryption).
    let encryption: StoreEncryption

    /// Whether this store's values are encrypted at rest with a device data key.
    public var isEncrypted: Bool { encryption.current.cipher != nil }

    /// Opens (creating when needed) the database in `home`, a directory created if missing.
    /// - Throws: `DraftStoreError` naming the directory or file and what to do.
    public init(home: URL, options: Options = Options()) throws {
        let directory = home.standardizedFileURL.path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw DraftStoreError(.homeNotUsable,
                    "The FieldSheet home \(directory) is a file, not a directory. Give a directory with --home or FIELDSHEET_HOME.")
            }
        } else {
            do {
                // Owner only: the home holds the device database and the login's token.
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DraftStoreError(.homeNotUsable,
                    "Could not create the FieldSheet home \(directory) (\(Self.reason(error, creating: directory))). Choose a writable directory with --home or FIELDSHEET_HOME.")
            }
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw DraftStoreError(.homeNotUsable,
                "The FieldSheet home \(directory) is not writable. Fix its permissions or choose another directory with --home or FIELDSHEET_HOME.")
        }
        try self.init(path: (directory as NSString).appendingPathComponent(Self.databaseFileName), options: options)
    }

    /// Opens (creating when needed) the database file at `path`.
    public init(path: String, options: Options = Options()) throws {
        self.path = path
        let encryption = StoreEncryption()
        self.encryption = encryption
        self.blobDirectory = BlobDirectory(home: (path as NSString).deletingLastPathComponent, encryption: encryption)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "DraftStore"
        let maximumPageCount = options.maximumPageCount
        configuration.prepareDatabase { db in
            encryption.register(db)
            if let maximumPageCount {
                try db.execute(sql: "PRAGMA max_page_count = \(maximumPageCount)")
            }
        }
        let pool: DatabasePool
        do {
            // Before the pool opens: opening one writes to the file (GRDB's probe table, the WAL).
            try Self.refuseNewerDatabase(path)
            try Self.createOwnerOnly(path)
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw DraftStoreError.wrap(error, doing: "opening the device database", path: path)
        }
        do {
            // WAL (set by DatabasePool, which also sets NORMAL on its writer) + FULL: the WAL is synced at
            // every commit, so an acknowledged edit survives a power cut, not only a crash of the process.
            // The writer connection lives as long as the pool, so this holds for every write.
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Checkpointer.writerBackstopPages)")
            }
            try DeviceMigrations.migrator.migrate(pool)
            let provider: (any DeviceKeyProvider)?
            switch options.encryption {
            case .keyFileInHome:
                provider = DeviceKeyFile(path: ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(DeviceKeyFile.defaultFileName))
            case .key(let given): provider = given
            case .none: provider = nil
            }
            let blobDirectory = self.blobDirectory
            try encryption.open(pool, path: path, provider: provider, batchSize: options.encryptionBatchSize, batchLimit: options.stopEncryptingAfterBatches) {
                do {
                    try blobDirectory.sealFilesInClear()
                } catch let error as BlobFileError {
                    throw DraftStoreError(error.kind == .full ? .storageFull : .storageFailed, "Could not encrypt the attachments of \(path): \(error.message).")
                }
            }
            self.deviceID = try pool.read { db in
                try String.fetchOne(db, sql: "SELECT device_id FROM sync_state WHERE id = 1") ?? "unknown-device"
            }
            self.pool = pool
            self.checkpointer = Checkpointer(path: path)
            self.changeMonitor = ExternalChangeMonitor(pool: pool, path: path)
            self.recovered = try Self.recoverAbandonedPresentations(in: pool)
        } catch {
            throw DraftStoreError.wrap(error, doing: "opening the device database", path: path)
        }
    }

    /// Refuses, writing nothing, a database at `path` that records a migration this version does not know.
    ///
    /// Read through a read-only connection; one to a database in WAL mode still creates the `-wal` and
    /// `-shm` files when they are missing, so those this check created are removed again.
    static func refuseNewerDatabase(_ path: String) throws {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > 0 else { return }
        let sideFiles = [path + "-wal", path + "-shm"]
        let existed = sideFiles.map { FileManager.default.fileExists(atPath: $0) }
        defer {
            // Only when neither existed: then no other connection had the database open in WAL mode.
            if !existed.contains(true) {
                for file in sideFiles { try? FileManager.default.removeItem(atPath: file) }
            }
        }
        var configuration = Configuration()
        configuration.readonly = true
        // Another process (or a store of this one being closed) may hold a lock for a moment: wait as the pool does.
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        let applied = try queue.read { db in try DeviceMigrations.migrator.appliedIdentifiers(db) }
        let unknown = applied.subtracting(DeviceMigrations.identifiers)
        guard unknown.isEmpty else {
            throw DraftStoreError(.newerDatabase,
                "The device database \(path) was written by a newer version of FieldSheet (it has \(unknown.sorted().joined(separator: ", ")), which this version does not know). It was left untouched. Update fieldsheet, or use another home with --home.")
        }
    }

    /// Creates an empty database file at `path`, readable and writable by the owner only, unless one exists.
    /// SQLite gives the `-wal` and `-shm` files it creates next to it the same permissions.
    static func createOwnerOnly(_ path: String) throws {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if fd >= 0 {
            _ = fchmod(fd, 0o600)  // whatever the umask
            close(fd)
        } else if errno != EEXIST {
            throw DraftStoreError(.homeNotUsable,
                "Could not create the device database \(path) (\(String(cString: strerror(errno)))). Check the permissions of its directory, or choose another home with --home or FIELDSHEET_HOME.")
        }
    }

    /// Closes every presentation whose process is gone as a non-cancel dismissal: the snapshot is
    /// dropped and the record keeps everything typed.
    static func recoverAbandonedPresentations(in pool: DatabasePool) throws -> [RecoveredPresentation] {
        try pool.write { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT p.id, p.owner, r.id AS record_id, r.form_id, r.state
                FROM presentations p JOIN records r ON r.id = p.record_id
                """)
            var recovered: [RecoveredPresentation] = []
            for row in rows where !ProcessIdentity.isAlive(row["owner"]) {
                let presentation: String = row["id"]
                let record: String = row["record_id"]
                if try isUntouchedNewRecord(db, presentation: presentation, record: record) {
                    // Nothing typed, nothing kept: no empty draft is left behind.
                    _ = try revertPresentation(db, presentation, record: record)
                    continue
                }
                try db.execute(sql: "DELETE FROM presentations WHERE id = ?", arguments: [presentation])
                recovered.append(RecoveredPresentation(
                    recordID: UUID(text: row["record_id"]) ?? UUID(),
                    formID: row["form_id"],
                    state: RecordState(rawValue: row["state"]) ?? .draft))
            }
            return recovered
        }
    }

    /// A presentation of a brand-new record, never sent to the server, in which no field was edited.
    static func isUntouchedNewRecord(_ db: Database, presentation: String, record: String) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT p.kind = 'new' AND r.server_revision = 0
                AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.presentation_id = p.id AND o.kind = 'set')
            FROM presentations p JOIN records r ON r.id = p.record_id WHERE p.id = ? AND r.id = ?
            """, arguments: [presentation, record]) ?? false
    }

    /// Runs SQLite's own check of the file; "ok" when it is sound.
    public func integrityCheck() async throws -> String {
        try await read(doing: "checking the device database") { db in
            try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "\n")
        }
    }

    // MARK: - Access with readable errors

    func write<T: Sendable>(doing: String, _ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(updates)
        } catch {
            throw DraftStoreError.wrap(error, doing: doing, path: path)
        }
    }

    /// A transaction committed without waiting for the disk (`synchronous = NORMAL` for its commit): a
    /// process killed after it returns keeps it (the WAL is written), a power cut may lose it, and the next
    /// commit that waits for the disk makes it durable too. Only for writes whose loss the device recovers
    /// from by itself (each caller says how).
    func unsyncedWrite<T: Sendable>(doing: String, _ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                defer { try? db.execute(sql: "PRAGMA synchronous = FULL") }
                var result: T?
                try db.inTransaction {
                    result = try updates(db)
                    return .commit
                }
                return result!
            }
        } catch {
            throw DraftStoreError.wrap(error, doing: doing, path: path)
        }
    }

    func read<T: Sendable>(doing: String, _ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(value)
        } catch {
            throw DraftStoreError.wrap(error, doing: doing, path: path)
        }
    }

    /// Why creating `path` failed, in plain words: the nearest existing parent is a file, or not writable.
    static func reason(_ error: any Error, creating path: String) -> String {
        var ancestor = (path as NSString).deletingLastPathComponent
        while !ancestor.isEmpty, ancestor != "/", !FileManager.default.fileExists(atPath: ancestor) {
            ancestor = (ancestor as NSString).deletingLastPathComponent
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: ancestor, isDirectory: &isDirectory), !isDirectory.boolValue {
            return "\(ancestor) is a file, not a directory"
        }
        if access(ancestor, W_OK) != 0 {
            return "\(ancestor) is not writable"
        }
        return (error as NSError).localizedDescription
    }

    static func nowMillis() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    static func date(_ millis: Int64) -> Date {
        Date(timeIntervalSince1970: Double(millis) / 1000)
    }
}

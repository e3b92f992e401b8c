import Crypto
import Foundation
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// ``AttachmentStore`` as files under a directory (the embedded server's data directory, `attachments/`):
/// `<project id>/<sha256>` once complete, `<project id>/<sha256>.<total>.<uploader>.partial` while a member uploads
/// it (each member's upload of a hash its own file).
///
/// An upload appends to the partial file as bytes arrive, fsyncing every few megabytes and when the request
/// ends, so what a status reports survives the process being killed. The SHA-256 is computed as the bytes
/// go by, its running state kept between the requests of one upload (the partial file is re-read only when
/// a request continues what this process did not hash: after a restart, or another instance's bytes); when the last byte
/// is in, a match renames the partial file to its final name and fsyncs the directory, a mismatch deletes it.
/// One request at a time sends a given member's upload: a second one is refused as busy.
public final class FileAttachmentStore: AttachmentStore {
    public let directory: String
    private let active = NIOLockedValueBox(Set<AttachmentUploadKey>())
    /// The running SHA-256 of each partial file as the last request left it, so a request that continues an
    /// upload hashes only its own bytes. Without it every request re-read all that was stored, and a file sent
    /// in chunks cost time in the square of its size (50 chunks of a 200 MB photo hashed about 5 GB).
    private let hashes = RunningHashes()
    /// Bytes appended between fsyncs.
    static let syncInterval: Int64 = 8 * 1024 * 1024
    static let pieceSize = 1024 * 1024

    /// `directory` is created (mode 0700) on the first upload.
    public init(directory: String) {
        self.directory = directory
    }

    func projectDirectory(_ key: AttachmentKey) -> String { "\(directory)/\(key.projectID)" }
    func finalPath(_ key: AttachmentKey) -> String { "\(projectDirectory(key))/\(key.sha256)" }

    /// What a partial file's name says: the hash, the total its upload was started with, and who sends it
    /// (nil for a partial file of a version that kept one upload per hash; only a sweep removes those).
    static func parsePartial(_ name: String) -> (sha256: String, total: Int64, uploader: Int64?)? {
        guard name.hasSuffix(".partial") else { return nil }
        let parts = name.dropLast(".partial".count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, AttachmentKey.isValidDigest(parts[0]), let total = Int64(parts[1]) else { return nil }
        if parts.count == 2 { return (String(parts[0]), total, nil) }
        guard let uploader = Int64(parts[2]) else { return nil }
        return (String(parts[0]), total, uploader)
    }

    /// The partial file of `upload` and the total it was started with, if one exists.
    func partial(_ upload: AttachmentUploadKey) -> (path: String, total: Int64)? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: projectDirectory(upload.key)) else { return nil }
        for name in names where name.hasPrefix(upload.key.sha256 + ".") {
            if let parsed = Self.parsePartial(name), parsed.uploader == upload.uploader { return ("\(projectDirectory(upload.key))/\(name)", parsed.total) }
        }
        return nil
    }

    public func stored(_ key: AttachmentKey) async throws -> Int64? {
        Self.fileSize(finalPath(key))
    }

    public func partialBytes(projectID: Int64, uploader: Int64?) async throws -> Int64 {
        let folder = "\(directory)/\(projectID)"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return 0 }
        var total: Int64 = 0
        for name in names {
            guard let parsed = Self.parsePartial(name), uploader == nil || parsed.uploader == uploader else { continue }
            total += Self.fileSize("\(folder)/\(name)") ?? 0
        }
        return total
    }

    public func status(_ key: AttachmentKey, uploader: Int64) async throws -> AttachmentStatus {
        let slot = AttachmentUploadKey(key, uploader: uploader)
        guard let partial = partial(slot) else { return .none }
        let received = Self.fileSize(partial.path) ?? 0
        if received >= partial.total, active.withLockedValue({ $0.insert(slot).inserted }) {
            // Every byte is in but the upload never finished (the server stopped between the last byte and the
            // rename): verify it now, or no client could ever complete it.
            let upload: FileAttachmentUpload
            do {
                upload = try open(slot, offset: received, total: partial.total, length: 0)
            } catch {
                release(slot)
                throw error
            }
            do {
                try await upload.complete()
                return AttachmentStatus(received: received, total: received, complete: true)
            } catch AttachmentError.hashMismatch {
                return .none
            }
        }
        return AttachmentStatus(received: received, total: partial.total, complete: false)
    }

    public func beginUpload(_ key: AttachmentKey, uploader: Int64, offset: Int64, total: Int64, length: Int64) async throws -> any AttachmentUpload {
        let slot = AttachmentUploadKey(key, uploader: uploader)
        guard active.withLockedValue({ $0.insert(slot).inserted }) else {
            throw AttachmentError.busy(received: partial(slot).flatMap { Self.fileSize($0.path) } ?? 0)
        }
        do {
            return try open(slot, offset: offset, total: total, length: length)
        } catch {
            release(slot)
            throw error
        }
    }

    /// Opens the upload; the caller holds `slot` in `active`.
    private func open(_ slot: AttachmentUploadKey, offset: Int64, total: Int64, length: Int64) throws -> FileAttachmentUpload {
        let key = slot.key
        var existing = partial(slot)
        if let current = existing, current.total != total {
            guard offset == 0 else { throw AttachmentError.lengthMismatch(total: current.total) }
            unlink(current.path)
            existing = nil
        }
        let received = existing.flatMap { Self.fileSize($0.path) } ?? 0
        guard offset == received else { throw AttachmentError.offsetMismatch(received: received) }
        try Self.makeDirectory(directory)
        try Self.makeDirectory(projectDirectory(key))
        if let free = Self.freeBytes(directory), free < length { throw AttachmentError.insufficientStorage }
        let path = existing?.path ?? "\(projectDirectory(key))/\(key.sha256).\(total).\(slot.uploader).partial"
        let descriptor = Glibc.open(path, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.ioError("open \(path)") }
        // The upload holds the partial file's lock while it is open: a sweep (in this process or an admin
        // command's) removes only a partial file it can lock, and one that was still at its path once locked.
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw AttachmentError.busy(received: received)
        }
        // A sweep may have removed the abandoned partial file between the look and the open: then this
        // descriptor is of the removed file, or of a new empty one, and the upload starts again from what is there.
        guard Self.isSameFile(descriptor, path) else {
            close(descriptor)
            throw AttachmentError.offsetMismatch(received: 0)
        }
        let held = Self.fileSize(descriptor: descriptor)
        guard held == received else {
            close(descriptor)
            throw AttachmentError.offsetMismatch(received: held)
        }
        if existing == nil { try Self.syncDirectory(projectDirectory(key)) }
        // The hash continues over what earlier requests stored: from where the last request of this process
        // left it when that is this very file at this length, else (a restart, bytes another instance appended)
        // by reading the file.
        var hasher = SHA256()
        if let kept = hashes.take(slot, length: received, identity: Self.identity(of: descriptor)) {
            hasher = kept
        } else {
            do {
                try Self.readPieces(path, range: 0..<received) { hasher.update(data: $0) }
            } catch {
                close(descriptor)
                throw error
            }
        }
        return FileAttachmentUpload(store: self, slot: slot, path: path, descriptor: descriptor, received: received, hasher: hasher)
    }

    /// Keeps the running hash of the partial file open at `descriptor` after a request appended its bytes.
    func keep(_ hasher: SHA256, of slot: AttachmentUploadKey, descriptor: Int32, length: Int64) {
        guard Self.fileSize(descriptor: descriptor) == length else { return }
        hashes.keep(slot, RunningHash(hasher: hasher, length: length, identity: Self.identity(of: descriptor)))
    }

    /// Which file `descriptor` is (device and inode): a partial file removed and started again is another one.
    static func identity(of descriptor: Int32) -> [Int64] {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return [-1] }
        return [Int64(bitPattern: UInt64(info.st_dev)), Int64(bitPattern: UInt64(info.st_ino))]
    }

    func release(_ slot: AttachmentUploadKey) {
        _ = active.withLockedValue { $0.remove(slot) }
    }

    public func read(_ key: AttachmentKey, range: ClosedRange<Int64>?) async throws -> AttachmentBytes? {
        let path = finalPath(key)
        // Opened first and measured through the descriptor: once open, the bytes stay readable even if a
        // sweep removes the file meanwhile.
        guard let reader = try PieceReader(path: path) else { return nil }
        let size = reader.size
        let wanted = range ?? 0...max(0, size - 1)
        reader.limit(to: size == 0 ? 0..<0 : wanted.lowerBound..<(wanted.upperBound + 1))
        // Pulled piece by piece: nothing is read before the response asks for it.
        let pieces = AsyncThrowingStream<Data, any Error>(unfolding: { try reader.next() })
        return AttachmentBytes(total: size, range: wanted, pieces: pieces)
    }

    public func leadingBytes(_ key: AttachmentKey, count: Int) async throws -> Data? {
        guard let reader = try PieceReader(path: finalPath(key)) else { return nil }
        reader.limit(to: 0..<min(reader.size, Int64(count)))
        var bytes = Data()
        while let piece = try reader.next() { bytes.append(piece) }
        return bytes
    }

    // MARK: Files

    static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    static func fileSize(descriptor: Int32) -> Int64 {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : 0
    }

    /// Whether `descriptor` is the file now at `path` (not one unlinked since it was opened).
    static func isSameFile(_ descriptor: Int32, _ path: String) -> Bool {
        var open = stat()
        var named = stat()
        return fstat(descriptor, &open) == 0 && stat(path, &named) == 0 && open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }

    /// Free bytes for an unprivileged process on the filesystem holding `path`; nil when it cannot be told.
    public static func freeBytes(_ path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0, errno != EEXIST { throw ioError("mkdir \(path)") }
    }

    static func syncDirectory(_ path: String) throws {
        let descriptor = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ioError("open \(path)") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw ioError("fsync \(path)") }
    }

    /// Reads `range` of the file at `path` in pieces of ``pieceSize``.
    static func readPieces(_ path: String, range: Range<Int64>, _ body: (Data) throws -> Void) throws {
        guard !range.isEmpty else { return }
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ioError("open \(path)") }
        defer { close(descriptor) }
        var offset = range.lowerBound
        var buffer = [UInt8](repeating: 0, count: pieceSize)
        while offset < range.upperBound {
            try Task.checkCancellation()
            let want = Int(min(Int64(pieceSize), range.upperBound - offset))
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, want, off_t(offset)) }
            guard count > 0 else { throw count == 0 ? StorageError.unavailable("\(path) is shorter than expected.") : ioError("read \(path)") }
            try body(Data(buffer[0..<count]))
            offset += Int64(count)
        }
    }

    static func ioError(_ what: String) -> any Error {
        if errno == ENOSPC || errno == EDQUOT { return AttachmentError.insufficientStorage }
        return StorageError.unavailable("Attachment storage failed: \(what): \(String(cString: strerror(errno))).")
    }
}

/// Reads a range of a file in pieces of ``FileAttachmentStore/pieceSize``, one per call.
final class PieceReader: @unchecked Sendable {
    private let lock = NIOLock()
    private let descriptor: Int32
    private let path: String
    private var offset: Int64 = 0
    private var end: Int64 = 0
    /// The file's size when it was opened.
    let size: Int64

    /// Opens the regular file at `path`; nil when there is none.
    init?(path: String) throws {
        descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw FileAttachmentStore.ioError("open \(path)")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            return nil
        }
        self.path = path
        size = Int64(info.st_size)
    }

    /// Reads `range` of the file from here on.
    func limit(to range: Range<Int64>) {
        lock.withLock {
            offset = range.lowerBound
            end = range.upperBound
        }
    }

    deinit { close(descriptor) }

    func next() throws -> Data? {
        try lock.withLock {
            guard offset < end else { return nil }
            var piece = Data(count: Int(min(Int64(FileAttachmentStore.pieceSize), end - offset)))
            let count = piece.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
            guard count > 0 else { throw count == 0 ? StorageError.unavailable("\(path) is shorter than expected.") : FileAttachmentStore.ioError("read \(path)") }
            piece.count = count
            offset += Int64(count)
            return piece
        }
    }
}

/// One request's upload into a partial file (used by one task at a time).
final class FileAttachmentUpload: AttachmentUpload, @unchecked Sendable {
    let store: FileAttachmentStore
    let slot: AttachmentUploadKey
    var key: AttachmentKey { slot.key }
    let path: String
    private var descriptor: Int32
    private var count: Int64
    private var unsynced: Int64 = 0
    private var hasher: SHA256

    init(store: FileAttachmentStore, slot: AttachmentUploadKey, path: String, descriptor: Int32, received: Int64, hasher: SHA256) {
        self.store = store
        self.slot = slot
        self.path = path
        self.descriptor = descriptor
        self.count = received
        self.hasher = hasher
    }

    deinit {
        if descriptor >= 0 {
            close(descriptor)
            store.release(slot)
        }
    }

    var received: Int64 { count }

    func append(_ bytes: Data) async throws {
        guard descriptor >= 0 else { return }
        try bytes.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count {
                let result = write(descriptor, raw.baseAddress! + written, raw.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    let error = FileAttachmentStore.ioError("write \(path)")
                    // Keep exactly the bytes counted (and hashed) so far.
                    _ = ftruncate(descriptor, off_t(count))
                    _ = fsync(descriptor)
                    throw error
                }
                written += result
            }
        }
        hasher.update(data: bytes)
        count += Int64(bytes.count)
        unsynced += Int64(bytes.count)
        if unsynced >= FileAttachmentStore.syncInterval {
            guard fsync(descriptor) == 0 else { throw FileAttachmentStore.ioError("fsync \(path)") }
            unsynced = 0
        }
    }

    func suspend() async throws {
        guard descriptor >= 0 else { return }
        defer { finish() }
        guard fsync(descriptor) == 0 else { throw FileAttachmentStore.ioError("fsync \(path)") }
        store.keep(hasher, of: slot, descriptor: descriptor, length: count)
    }

    func complete() async throws {
        guard descriptor >= 0 else { return }
        defer { finish() }
        guard fsync(descriptor) == 0 else { throw FileAttachmentStore.ioError("fsync \(path)") }
        let actual = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        let directory = store.projectDirectory(key)
        guard actual == key.sha256 else {
            unlink(path)
            try FileAttachmentStore.syncDirectory(directory)
            throw AttachmentError.hashMismatch(actual: actual)
        }
        // When the attachment is stored already (another member's upload), the same verified bytes replace it
        // in one step; a download that opened the old file goes on reading it.
        guard rename(path, store.finalPath(key)) == 0 else { throw FileAttachmentStore.ioError("rename \(path)") }
        try FileAttachmentStore.syncDirectory(directory)
    }

    private func finish() {
        close(descriptor)
        descriptor = -1
        store.release(slot)
    }
}

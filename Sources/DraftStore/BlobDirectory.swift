#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif
import Foundation
import FormModel

/// The attachments' bytes on the device: `attachments/<sha256>` under the home, one file per content, so
/// the same photo attached twice is stored once.
///
/// Bytes only ever reach a final name through a temporary file in the same directory that was written,
/// hashed and fsynced first; the rename and the directory's fsync happen under the database's write lock
/// (see `DraftStore+Blobs`), so a garbage collection never removes a file an attach is placing. A failure
/// at any step removes the temporary file: nothing half-written is left under a hash's name.
///
/// In an encrypted store every file here is sealed with the device data key (``SealedBlobFile``); its name,
/// the SHA-256 of the plaintext, and its size (plus 28 bytes a chunk and a 20-byte header) stay visible.
struct BlobDirectory: Sendable {
    /// The directory's name inside the home.
    static let name = "attachments"
    /// Prefix of a file being written by an attach (`.incoming-<uuid>`).
    static let incomingPrefix = ".incoming-"
    /// Suffix of a download under way (`<sha256>.partial`): resumed from its size, renamed once verified.
    static let partialSuffix = ".partial"
    /// Bytes read and written per step while copying.
    static let chunkSize = 1 << 20

    /// `…/attachments`.
    let path: String

    /// The store's cipher, read at each use (the key is known once the database is open).
    let encryption: StoreEncryption

    init(home: String, encryption: StoreEncryption) {
        path = (home as NSString).appendingPathComponent(Self.name)
        self.encryption = encryption
    }

    /// How files are sealed here; nil in a store opened without encryption.
    var sealing: SealedBlobFile? { encryption.current.cipher.map(SealedBlobFile.init(cipher:)) }

    /// Where the verified bytes of `sha256` live.
    func file(_ sha256: String) -> String { (path as NSString).appendingPathComponent(sha256) }

    /// Where a download of `sha256` collects its bytes until they are verified.
    func partial(_ sha256: String) -> String { file(sha256) + Self.partialSuffix }

    /// Whether the verified bytes of `sha256` are here.
    func contains(_ sha256: String) -> Bool { access(file(sha256), F_OK) == 0 }

    /// Creates the directory (owner only) when missing.
    func create() throws {
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw BlobFileError(errno: errno, doing: "creating the attachments directory \(path)")
        }
    }

    /// A file copied in, hashed, and synced to disk under a temporary name; not yet under its hash.
    struct Incoming: Sendable {
        /// The temporary file, in the blob directory.
        var temporary: String
        /// The SHA-256 of its bytes, 64 lowercase hex digits.
        var sha256: String
        /// Its size.
        var bytes: Int64
    }

    /// Copies `source` into a temporary file here while hashing it, and fsyncs the copy.
    /// `write` is the one place bytes are written (tests inject a full disk there).
    func copyIn(_ source: String, write: BlobWriter = .system) throws -> Incoming {
        try create()
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw BlobFileError(errno: errno, doing: "opening \(source)") }
        defer { close(input) }
        var status = stat()
        guard fstat(input, &status) == 0 else { throw BlobFileError(errno: errno, doing: "reading \(source)") }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw BlobFileError(.notAFile, "\(source) is not a regular file (a directory or a device); give the path of a file.")
        }
        let temporary = (path as NSString).appendingPathComponent(Self.incomingPrefix + UUID().lowercased)
        let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw BlobFileError(errno: errno, doing: "creating a file in \(path)") }
        var finished = false
        defer {
            close(output)
            if !finished { unlink(temporary) }
        }
        var hasher = SHA256()
        var total: Int64 = 0
        var buffer = [UInt8](repeating: 0, count: Self.chunkSize)
        var sealed = try sealing.map { try SealedBlobFile.Writer($0, fd: output, write: write, doing: "copying \(source) into \(path)") }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw BlobFileError(errno: errno, doing: "reading \(source)")
            }
            if count == 0 { break }
            try buffer.withUnsafeBytes { bytes in
                let chunk = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
                hasher.update(bufferPointer: chunk)
                if sealed != nil {
                    try sealed!.append(chunk)
                } else {
                    try write.all(output, chunk, doing: "copying \(source) into \(path)")
                }
            }
            total += Int64(count)
        }
        try sealed?.finish()
        guard fsync(output) == 0 else { throw BlobFileError(errno: errno, doing: "saving \(source) into \(path)") }
        finished = true
        return Incoming(temporary: temporary, sha256: Hex.lowercase(hasher.finalize()), bytes: total)
    }

    /// Moves a verified temporary file to its hash's name and fsyncs the directory, so the name survives
    /// a power cut. Returns whether the name is new (false: the same bytes were already here, and the
    /// temporary file is simply removed).
    @discardableResult
    func place(_ temporary: String, as sha256: String) throws -> Bool {
        let final = file(sha256)
        if access(final, F_OK) == 0 {
            unlink(temporary)
            return false
        }
        guard rename(temporary, final) == 0 else {
            let error = BlobFileError(errno: errno, doing: "saving the attachment \(sha256) in \(path)")
            unlink(temporary)
            throw error
        }
        do {
            try syncDirectory()
        } catch {
            unlink(final)
            throw error
        }
        return true
    }

    /// Bytes `range` of the stored `sha256`.
    func bytes(_ sha256: String, _ range: ClosedRange<Int64>) throws -> Data {
        let path = file(sha256)
        if let sealing { return try sealing.read(path, range) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BlobFileError(errno: errno, doing: "opening the attachment \(path)") }
        defer { close(fd) }
        let count = Int(range.upperBound - range.lowerBound + 1)
        var data = Data(count: count)
        var done = 0
        try data.withUnsafeMutableBytes { buffer in
            while done < count {
                let got = pread(fd, buffer.baseAddress! + done, count - done, off_t(range.lowerBound) + off_t(done))
                if got < 0 {
                    if errno == EINTR { continue }
                    throw BlobFileError(errno: errno, doing: "reading the attachment \(path)")
                }
                if got == 0 { throw BlobFileError(.missing, "The attachment \(path) is shorter than its record says; it was changed outside FieldSheet.") }
                done += got
            }
        }
        return data
    }

    /// Size of the partial download of `sha256`; 0 when there is none.
    func partialSize(_ sha256: String) -> Int64 {
        if sealing != nil { return SealedBlobFile.plaintextSize(partial(sha256)) }
        var status = stat()
        return stat(partial(sha256), &status) == 0 ? Int64(status.st_size) : 0
    }

    /// Writes `data` at `offset` of the partial download of `sha256` (created when missing), and cuts the
    /// file there: what follows is not trusted.
    func writePartial(_ sha256: String, at offset: Int64, _ data: Data, write: BlobWriter = .system) throws {
        try create()
        let path = partial(sha256)
        if let sealing { return try sealing.writePartial(path, at: offset, data, write: write) }
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BlobFileError(errno: errno, doing: "creating \(path)") }
        defer { close(fd) }
        guard ftruncate(fd, off_t(offset)) == 0, lseek(fd, off_t(offset), SEEK_SET) >= 0 else {
            throw BlobFileError(errno: errno, doing: "writing \(path)")
        }
        try data.withUnsafeBytes { try write.all(fd, $0, doing: "writing \(path)") }
    }

    /// fsyncs a file.
    func syncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BlobFileError(errno: errno, doing: "opening \(path)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw BlobFileError(errno: errno, doing: "saving \(path)") }
    }

    /// Removes the verified bytes of `sha256` and any partial download of it.
    func remove(_ sha256: String) {
        unlink(file(sha256))
        unlink(partial(sha256))
    }

    /// fsyncs the directory, making renames and removals in it durable.
    func syncDirectory() throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw BlobFileError(errno: errno, doing: "opening \(path)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw BlobFileError(errno: errno, doing: "saving the attachments directory \(path)") }
    }

    /// Names in the directory: verified blobs by hash, partial downloads, and temporary files with their age.
    func listing() -> (blobs: Set<String>, partials: Set<String>, incoming: [(name: String, age: TimeInterval)]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return ([], [], []) }
        var blobs = Set<String>(), partials = Set<String>(), incoming: [(String, TimeInterval)] = []
        for name in names {
            if name.hasPrefix(Self.incomingPrefix) {
                let attributes = try? FileManager.default.attributesOfItem(atPath: (path as NSString).appendingPathComponent(name))
                let modified = attributes?[.modificationDate] as? Date ?? Date()
                incoming.append((name, Date().timeIntervalSince(modified)))
            } else if name.hasSuffix(Self.partialSuffix) {
                partials.insert(String(name.dropLast(Self.partialSuffix.count)))
            } else if AttachmentHash.isValid(name) {
                blobs.insert(name)
            }
        }
        return (blobs, partials, incoming)
    }

    /// The SHA-256 and size of the plaintext of the download under way of `sha256`; in an encrypted store, its
    /// last chunk is sealed again as the last, ready to be placed.
    func finishPartial(_ sha256: String) throws -> (sha256: String, bytes: Int64) {
        let path = partial(sha256)
        guard let sealing else { return try Self.hash(ofFile: path) }
        var hasher = SHA256()
        var total: Int64 = 0
        try sealing.forEachChunk(path, complete: false) { chunk in
            hasher.update(data: chunk)
            total += Int64(chunk.count)
        }
        try sealing.sealLastChunk(path)
        return (Hex.lowercase(hasher.finalize()), total)
    }

    /// The whole plaintext of the stored `sha256`.
    func contents(_ sha256: String) throws -> Data {
        let path = file(sha256)
        if let sealing {
            var data = Data()
            try sealing.forEachChunk(path, complete: true) { data.append(contentsOf: $0) }
            return data
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw BlobFileError(.missing, "\(path) cannot be read") }
        return data
    }

    /// Seals every stored file still in clear (written before the store was encrypted), each through a sealed
    /// copy renamed over it, and drops downloads under way in clear (they start again). Run while the store is
    /// being encrypted; a file already sealed is left.
    func sealFilesInClear() throws {
        guard let sealing else { return }
        let (blobs, partials, _) = listing()
        for name in partials { unlink(partial(name)) }
        guard !blobs.isEmpty || !partials.isEmpty else { return }
        for sha256 in blobs.sorted() where !sealing.isSealed(file(sha256)) {
            let incoming = try copyIn(file(sha256))
            guard rename(incoming.temporary, file(sha256)) == 0 else {
                let error = BlobFileError(errno: errno, doing: "encrypting the attachment \(sha256)")
                unlink(incoming.temporary)
                throw error
            }
        }
        try syncDirectory()
    }

    /// The SHA-256 of a whole file, read in chunks (memory flat in the file's size).
    static func hash(ofFile path: String) throws -> (sha256: String, bytes: Int64) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BlobFileError(errno: errno, doing: "opening \(path)") }
        defer { close(fd) }
        var hasher = SHA256()
        var total: Int64 = 0
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw BlobFileError(errno: errno, doing: "reading \(path)")
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            total += Int64(count)
        }
        return (Hex.lowercase(hasher.finalize()), total)
    }
}

/// Writes bytes to a file descriptor: the one place attachment bytes are written, so a test can make it
/// fail the way a full disk does.
struct BlobWriter: Sendable {
    let write: @Sendable (Int32, UnsafeRawBufferPointer) -> Int

    /// `write(2)`.
    static let system = BlobWriter(write: systemWrite)

    /// Writes all of `bytes`, retrying short writes and interruptions.
    func all(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, doing: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            if written < 0 {
                if errno == EINTR { continue }
                throw BlobFileError(errno: errno, doing: doing)
            }
            if written == 0 { throw BlobFileError(errno: ENOSPC, doing: doing) }
            offset += written
        }
    }
}

/// `write(2)`, named apart from `BlobWriter.write`.
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    write(fd, bytes.baseAddress, bytes.count)
}

/// A file step of the blob store that failed, with errno's meaning in words.
struct BlobFileError: Error, Sendable {
    enum Kind: Sendable { case full, missing, notAFile, denied, other }
    var kind: Kind
    var message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    init(errno code: Int32, doing: String) {
        switch code {
        case ENOSPC, EDQUOT, EFBIG: kind = .full
        case ENOENT, ENOTDIR: kind = .missing
        case EACCES, EPERM, EROFS: kind = .denied
        case EISDIR: kind = .notAFile
        default: kind = .other
        }
        message = "\(doing) failed: \(String(cString: strerror(code)))"
    }
}

/// What an attachment's hash looks like: 64 lowercase hex digits.
enum AttachmentHash {
    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}

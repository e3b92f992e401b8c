import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension FileAttachmentStore {
    /// One attachment file, as a sweep sees it.
    public struct StoredFile: Sendable, Hashable {
        public var key: AttachmentKey
        /// Verified and at its final name; otherwise an upload's partial file.
        public var complete: Bool
        /// Who sends a partial file (nil for a complete one, and for a partial file of a version that kept
        /// one upload per hash).
        public var uploader: Int64?
        public var path: String
        public var bytes: Int64
        /// When it was last written: the last appended byte of a partial file, the completion of a complete one.
        public var modified: Date
    }

    /// Every attachment file of every project, complete and partial (anything else in the directory is left out).
    public func inventory() -> [StoredFile] {
        guard let projects = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var files: [StoredFile] = []
        for project in projects {
            guard let projectID = Int64(project) else { continue }
            let folder = "\(directory)/\(project)"
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names {
                let sha256 = String(name.prefix(64))
                guard AttachmentKey.isValidDigest(sha256) else { continue }
                let complete = name.count == 64
                var uploader: Int64?
                if !complete {
                    guard let parsed = Self.parsePartial(name) else { continue }
                    uploader = parsed.uploader
                }
                let path = "\(folder)/\(name)"
                var info = stat()
                guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
                files.append(StoredFile(
                    key: AttachmentKey(projectID: projectID, sha256: sha256), complete: complete, uploader: uploader, path: path, bytes: Int64(info.st_size),
                    modified: Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)))
            }
        }
        return files
    }

    /// Removes the complete file of `key`; returns the bytes freed, nil when there was none. The caller holds
    /// the database's write lock and has just checked that nothing references it. A download that opened the
    /// file before goes on reading it to the end.
    public func removeComplete(_ key: AttachmentKey) throws -> Int64? {
        let path = finalPath(key)
        guard let size = Self.fileSize(path) else { return nil }
        guard unlink(path) == 0 else {
            if errno == ENOENT { return nil }
            throw Self.ioError("unlink \(path)")
        }
        try Self.syncDirectory(projectDirectory(key))
        return size
    }

    /// Removes the partial file `file` if nothing was appended to it after `cutoff` and no upload holds it
    /// (an upload holds its file's lock from open to end); returns the bytes freed, nil when it was left.
    public func removeAbandonedPartial(_ file: StoredFile, lastAppendBefore cutoff: Date) throws -> Int64? {
        let descriptor = Glibc.open(file.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0, Self.isSameFile(descriptor, file.path) else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        let modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        guard modified <= cutoff else { return nil }
        guard unlink(file.path) == 0 else {
            if errno == ENOENT { return nil }
            throw Self.ioError("unlink \(file.path)")
        }
        try Self.syncDirectory(projectDirectory(file.key))
        return Int64(info.st_size)
    }
}

extension FileAttachmentStore {
    /// Whether the complete file of `key` is there (checked by the database's writer before it notes an
    /// attachment as stored, so a sweep that removed it meanwhile is never contradicted).
    public func holdsComplete(_ key: AttachmentKey) -> Bool {
        Self.fileSize(finalPath(key)) != nil
    }
}

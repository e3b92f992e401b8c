import Foundation

/// An attachment's bytes sealed with the device data key, in authenticated chunks so they stream both
/// ways (docs/device-encryption.md).
///
/// The file is a header — `FSB1` and a random 16-byte file id — then chunks of 64 KiB of plaintext (the last
/// one shorter, possibly empty), each sealed on its own: `nonce | ciphertext | tag`. A chunk's associated data
/// is the file id, its index and whether it is the last one, so chunks cannot be moved between files or
/// reordered, and a file cut at a chunk boundary is refused (its new last chunk was not sealed as the last).
/// A download under way (`<sha256>.partial`) seals every chunk as not last; finishing it seals the last chunk
/// again as the last.
struct SealedBlobFile {
    static let magic = Array("FSB1".utf8)
    static let headerSize = 4 + 16
    static let chunkPlaintext = 64 * 1024
    static let chunkOverhead = 12 + 16
    static let chunkSize = chunkPlaintext + chunkOverhead

    let cipher: DeviceCipher

    static func place(_ fileID: ArraySlice<UInt8>, _ index: Int, last: Bool) -> [UInt8] {
        var bytes = Array("blob".utf8)
        bytes.append(0)
        bytes.append(contentsOf: fileID)
        withUnsafeBytes(of: UInt64(index).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(last ? 1 : 0)
        return bytes
    }

    func sealChunk(_ plaintext: ArraySlice<UInt8>, fileID: ArraySlice<UInt8>, index: Int, last: Bool) throws -> [UInt8] {
        // The cipher's version byte is not repeated in each chunk: the header says what the file is.
        Array(try cipher.seal(plaintext, place: Self.place(fileID, index, last: last)).dropFirst())
    }

    func openChunk(_ sealed: ArraySlice<UInt8>, fileID: ArraySlice<UInt8>, index: Int, last: Bool) -> [UInt8]? {
        cipher.open([DeviceCipher.version] + sealed, place: Self.place(fileID, index, last: last))
    }

    /// A new header with a random file id.
    static func newHeader() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return magic + (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Writes a sealed file to `fd` from a stream of plaintext.
    struct Writer {
        let file: SealedBlobFile
        let fd: Int32
        let write: BlobWriter
        let doing: String
        let fileID: ArraySlice<UInt8>
        var index: Int
        var pending: [UInt8] = []

        /// Starts a file at the beginning of `fd` (writes its header).
        init(_ file: SealedBlobFile, fd: Int32, write: BlobWriter, doing: String) throws {
            let header = SealedBlobFile.newHeader()
            try header.withUnsafeBytes { try write.all(fd, $0, doing: doing) }
            self.init(file, fd: fd, write: write, doing: doing, fileID: header[4...], index: 0)
        }

        /// Goes on with a file whose chunks before `index` are written and `fd` positioned after them.
        init(_ file: SealedBlobFile, fd: Int32, write: BlobWriter, doing: String, fileID: ArraySlice<UInt8>, index: Int) {
            self.file = file
            self.fd = fd
            self.write = write
            self.doing = doing
            self.fileID = fileID
            self.index = index
            pending.reserveCapacity(SealedBlobFile.chunkPlaintext)
        }

        /// Adds plaintext; a full chunk is sealed once more bytes follow it (only then is it known not to be last).
        mutating func append(_ bytes: UnsafeRawBufferPointer) throws {
            var offset = 0
            while offset < bytes.count {
                if pending.count == SealedBlobFile.chunkPlaintext { try emit(last: false) }
                let take = min(bytes.count - offset, SealedBlobFile.chunkPlaintext - pending.count)
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)]))
                offset += take
            }
        }

        /// Seals what is left: as the last chunk, or (a download to be continued) as one more that is not.
        mutating func finish(last: Bool = true) throws {
            if last || !pending.isEmpty { try emit(last: last) }
        }

        private mutating func emit(last: Bool) throws {
            let sealed = try file.sealChunk(pending[...], fileID: fileID, index: index, last: last)
            try sealed.withUnsafeBytes { try write.all(fd, $0, doing: doing) }
            index += 1
            pending.removeAll(keepingCapacity: true)
        }
    }

    /// The layout of a sealed file of `size` bytes: its chunk count and plaintext size; nil when no sealed file
    /// has that size.
    static func layout(size: Int64) -> (chunks: Int, plaintext: Int64)? {
        guard size >= Int64(headerSize) else { return nil }
        let body = size - Int64(headerSize)
        let full = body / Int64(chunkSize)
        let rest = body % Int64(chunkSize)
        if rest == 0 { return full == 0 ? (0, 0) : (Int(full), full * Int64(chunkPlaintext)) }
        guard rest >= Int64(chunkOverhead) else { return nil }
        return (Int(full) + 1, full * Int64(chunkPlaintext) + rest - Int64(chunkOverhead))
    }

    /// Reads the header and size of an open sealed file.
    static func header(_ fd: Int32, path: String) throws -> (fileID: ArraySlice<UInt8>, size: Int64) {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw BlobFileError(errno: errno, doing: "reading \(path)") }
        var header = [UInt8](repeating: 0, count: headerSize)
        try readFully(fd, into: &header, at: 0, path: path)
        guard Array(header[0..<4]) == magic else {
            throw BlobFileError(.other, "\(path) is not an encrypted attachment of this device (it was changed outside FieldSheet)")
        }
        return (header[4...], Int64(status.st_size))
    }

    static func readFully(_ fd: Int32, into buffer: inout [UInt8], at offset: Int64, path: String) throws {
        var done = 0
        let count = buffer.count
        try buffer.withUnsafeMutableBytes { bytes in
            while done < count {
                let got = pread(fd, bytes.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if got < 0 {
                    if errno == EINTR { continue }
                    throw BlobFileError(errno: errno, doing: "reading \(path)")
                }
                if got == 0 { throw BlobFileError(.missing, "\(path) is shorter than it should be; it was changed outside FieldSheet.") }
                done += got
            }
        }
    }

    /// Chunk `index` of an open sealed file, opened; `last` as it was sealed.
    func chunk(_ fd: Int32, path: String, fileID: ArraySlice<UInt8>, size: Int64, index: Int, last: Bool) throws -> [UInt8] {
        let start = Int64(Self.headerSize) + Int64(index) * Int64(Self.chunkSize)
        var sealed = [UInt8](repeating: 0, count: Int(min(Int64(Self.chunkSize), size - start)))
        try Self.readFully(fd, into: &sealed, at: start, path: path)
        guard let plaintext = openChunk(sealed[...], fileID: fileID, index: index, last: last) else {
            throw BlobFileError(.other, "Chunk \(index) of the encrypted attachment \(path) does not open with the device key: it was altered, cut short or moved")
        }
        return plaintext
    }

    /// Plaintext bytes `range` of the sealed file at `path` (`complete`: a finished file, whose last chunk is
    /// sealed as such; false for a download under way).
    func read(_ path: String, _ range: ClosedRange<Int64>, complete: Bool = true) throws -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BlobFileError(errno: errno, doing: "opening the attachment \(path)") }
        defer { close(fd) }
        let (fileID, size) = try Self.header(fd, path: path)
        guard let layout = Self.layout(size: size), complete ? layout.chunks > 0 : true else {
            throw BlobFileError(.other, "The encrypted attachment \(path) has a size no sealed file has; it was cut short or changed outside FieldSheet")
        }
        guard range.upperBound < layout.plaintext else {
            throw BlobFileError(.missing, "The attachment \(path) is shorter than its record says; it was changed outside FieldSheet.")
        }
        var data = Data(capacity: Int(range.upperBound - range.lowerBound + 1))
        let first = Int(range.lowerBound / Int64(Self.chunkPlaintext))
        let lastIndex = Int(range.upperBound / Int64(Self.chunkPlaintext))
        for index in first...lastIndex {
            let plaintext = try chunk(fd, path: path, fileID: fileID, size: size, index: index, last: complete && index == layout.chunks - 1)
            let chunkStart = Int64(index) * Int64(Self.chunkPlaintext)
            let from = Int(max(range.lowerBound - chunkStart, 0))
            let to = Int(min(range.upperBound - chunkStart, Int64(plaintext.count) - 1))
            data.append(contentsOf: plaintext[from...to])
        }
        return data
    }

    /// Calls `body` with each chunk's plaintext of the sealed file at `path`, in order.
    func forEachChunk(_ path: String, complete: Bool, _ body: ([UInt8]) throws -> Void) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BlobFileError(errno: errno, doing: "opening \(path)") }
        defer { close(fd) }
        let (fileID, size) = try Self.header(fd, path: path)
        guard let layout = Self.layout(size: size) else {
            throw BlobFileError(.other, "The encrypted attachment \(path) has a size no sealed file has; it was cut short or changed outside FieldSheet")
        }
        for index in 0..<layout.chunks {
            try body(try chunk(fd, path: path, fileID: fileID, size: size, index: index, last: complete && index == layout.chunks - 1))
        }
    }

    /// Plaintext size of the sealed file at `path` (0 when it is missing or not one).
    static func plaintextSize(_ path: String) -> Int64 {
        var status = stat()
        guard stat(path, &status) == 0 else { return 0 }
        return layout(size: Int64(status.st_size))?.plaintext ?? 0
    }

    /// Writes `data` at plaintext `offset` of the download under way at `path` (created when missing), every
    /// chunk sealed as not last, and cuts the file there.
    func writePartial(_ path: String, at offset: Int64, _ data: Data, write: BlobWriter) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BlobFileError(errno: errno, doing: "creating \(path)") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw BlobFileError(errno: errno, doing: "reading \(path)") }
        let index = Int(offset / Int64(Self.chunkPlaintext))
        var writer: Writer
        if status.st_size < Int64(Self.headerSize) || offset == 0 {
            if offset > 0 { throw BlobFileError(.other, "A download of \(path) resumed at \(offset) with no bytes before it") }
            guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) >= 0 else { throw BlobFileError(errno: errno, doing: "writing \(path)") }
            writer = try Writer(self, fd: fd, write: write, doing: "writing \(path)")
        } else {
            let (fileID, size) = try Self.header(fd, path: path)
            // The chunk `offset` falls in keeps its bytes before `offset`; everything from it on is written again.
            let keep = Int(offset % Int64(Self.chunkPlaintext))
            var prefix: [UInt8] = []
            if keep > 0 { prefix = Array(try chunk(fd, path: path, fileID: fileID, size: size, index: index, last: false).prefix(keep)) }
            let start = Int64(Self.headerSize) + Int64(index) * Int64(Self.chunkSize)
            guard ftruncate(fd, off_t(start)) == 0, lseek(fd, off_t(start), SEEK_SET) >= 0 else {
                throw BlobFileError(errno: errno, doing: "writing \(path)")
            }
            writer = Writer(self, fd: fd, write: write, doing: "writing \(path)", fileID: fileID, index: index)
            try prefix.withUnsafeBytes { try writer.append($0) }
        }
        try data.withUnsafeBytes { try writer.append($0) }
        try writer.finish(last: false)
    }

    /// Seals the last chunk of a complete download at `path` again, as the last (an empty download gets its one
    /// empty last chunk).
    func sealLastChunk(_ path: String) throws {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw BlobFileError(errno: errno, doing: "opening \(path)") }
        defer { close(fd) }
        let (fileID, size) = try Self.header(fd, path: path)
        guard let layout = Self.layout(size: size) else { throw BlobFileError(.other, "\(path) is not a sealed download") }
        let index = max(layout.chunks - 1, 0)
        let plaintext = layout.chunks == 0 ? [] : try chunk(fd, path: path, fileID: fileID, size: size, index: index, last: false)
        let sealed = try sealChunk(plaintext[...], fileID: fileID, index: index, last: true)
        let start = Int64(Self.headerSize) + Int64(index) * Int64(Self.chunkSize)
        try sealed.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let wrote = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(start) + off_t(done))
                if wrote < 0 {
                    if errno == EINTR { continue }
                    throw BlobFileError(errno: errno, doing: "writing \(path)")
                }
                done += wrote
            }
        }
    }

    /// Whether the file at `path` is sealed with this key (its first chunk opens); false for one in clear.
    func isSealed(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard let header = try? Self.header(fd, path: path), let layout = Self.layout(size: header.size), layout.chunks > 0 else { return false }
        return (try? chunk(fd, path: path, fileID: header.fileID, size: header.size, index: 0, last: layout.chunks == 1)) != nil
    }
}

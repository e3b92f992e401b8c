import Crypto
import Foundation
import NIOConcurrencyHelpers

/// Where attachment bytes live, by project and SHA-256: uploads that resume at any byte, verified
/// against their hash when the last byte arrives, then read whole or by range.
///
/// Two implementations: ``FileAttachmentStore`` (files in the data directory, for the embedded SQLite
/// server) and the PostgreSQL store in ServerPostgres (chunks in the shared database, for several
/// instances). Which records reference which attachment is kept by ``ServerStorage``, not here.
///
/// Rules for implementations:
/// - Bytes are appended as they arrive and never collected whole in memory.
/// - ``AttachmentStatus/received`` counts only bytes that survive the server's process being killed; once a
///   hash is ``AttachmentStatus/complete`` the bytes are durable and verified.
/// - An upload whose bytes do not hash to its name is discarded whole (``AttachmentError/hashMismatch``).
/// - Attachments are kept per project: a member learns nothing about other projects' files.
public protocol AttachmentStore: Sendable {
    /// The size of the attachment when it is stored and verified; nil otherwise.
    func stored(_ key: AttachmentKey) async throws -> Int64?
    /// How much of its upload of the attachment `uploader` (a user id) has sent. Each member's upload of a
    /// hash is their own: another member's upload of the same hash neither shows here nor moves or discards
    /// it. `complete` only when this very upload was found whole and verified now (its last request ended
    /// between the last byte and the check).
    func status(_ key: AttachmentKey, uploader: Int64) async throws -> AttachmentStatus
    /// Opens `uploader`'s upload to continue at `offset` of `total` bytes, `length` of which this request means
    /// to send (``AttachmentError/insufficientStorage`` at once when they cannot fit). Throws
    /// ``AttachmentError/offsetMismatch(received:)`` unless `offset` is what the store holds of this upload,
    /// ``AttachmentError/busy(received:)`` while another request of the same uploader sends it. An upload of
    /// theirs started with another total is discarded when `offset` is 0, refused
    /// (``AttachmentError/lengthMismatch(total:)``) otherwise. An attachment stored already is uploaded (and
    /// verified) all the same: sending its bytes is how a member shows they hold them.
    func beginUpload(_ key: AttachmentKey, uploader: Int64, offset: Int64, total: Int64, length: Int64) async throws -> any AttachmentUpload
    /// The bytes of a complete attachment (`range` within it, or all), in pieces of bounded size;
    /// nil when the attachment is not complete.
    func read(_ key: AttachmentKey, range: ClosedRange<Int64>?) async throws -> AttachmentBytes?
    /// The first `count` bytes of a complete attachment (fewer when it is shorter), read without holding it
    /// against a sweep as a download does; nil when the attachment is not complete.
    func leadingBytes(_ key: AttachmentKey, count: Int) async throws -> Data?
    /// The bytes the project's uploads in progress hold (only `uploader`'s when given): what a quota counts
    /// beside the stored attachments.
    func partialBytes(projectID: Int64, uploader: Int64?) async throws -> Int64
}

/// One member's upload of one attachment.
package struct AttachmentUploadKey: Sendable, Hashable {
    package var key: AttachmentKey
    /// The user sending it.
    package var uploader: Int64

    package init(_ key: AttachmentKey, uploader: Int64) {
        self.key = key
        self.uploader = uploader
    }
}

/// One request's share of an upload: appends, then either suspends (the body ended early: what arrived is
/// kept) or completes (the last byte arrived: verified and made durable, or discarded).
public protocol AttachmentUpload: Sendable {
    /// Bytes held so far, including what this upload appended.
    var received: Int64 { get async }
    /// Appends bytes at the end; throws ``AttachmentError/insufficientStorage`` when the disk is full (what was
    /// appended before stays).
    func append(_ bytes: Data) async throws
    /// Makes what was appended durable and lets the next request continue.
    func suspend() async throws
    /// All `total` bytes are in: checks the SHA-256. A match makes the attachment complete and durable; a
    /// mismatch discards every byte of it and throws ``AttachmentError/hashMismatch(actual:)``.
    func complete() async throws
}

/// A project's attachment, by its content's SHA-256.
public struct AttachmentKey: Sendable, Hashable, CustomStringConvertible {
    public var projectID: Int64
    /// 64 lowercase hex digits (``AttachmentKey/isValidDigest(_:)``).
    public var sha256: String

    public init(projectID: Int64, sha256: String) {
        self.projectID = projectID
        self.sha256 = sha256
    }

    /// Whether `text` is a SHA-256 as attachments are named: exactly 64 lowercase hex digits.
    public static func isValidDigest(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    public var description: String { "attachment \(sha256) of project \(projectID)" }
}

/// What the store holds of one attachment.
public struct AttachmentStatus: Sendable, Hashable {
    /// Bytes held (all of them when complete).
    public var received: Int64
    /// The attachment's size, once an upload said it.
    public var total: Int64?
    /// Stored and verified: nothing more to send.
    public var complete: Bool

    public init(received: Int64, total: Int64?, complete: Bool) {
        self.received = received
        self.total = total
        self.complete = complete
    }

    public static let none = AttachmentStatus(received: 0, total: nil, complete: false)
}

/// A complete attachment's bytes (or a range of them), read piece by piece.
public struct AttachmentBytes: Sendable {
    /// The attachment's whole size.
    public var total: Int64
    /// The bytes served: the range asked for, or all.
    public var range: ClosedRange<Int64>
    /// The pieces, in order; each at most about a megabyte.
    public var pieces: AsyncThrowingStream<Data, any Error>

    public init(total: Int64, range: ClosedRange<Int64>, pieces: AsyncThrowingStream<Data, any Error>) {
        self.total = total
        self.range = range
        self.pieces = pieces
    }
}

/// Why an attachment operation was refused.
package enum AttachmentError: Error, Sendable, Hashable {
    /// The upload must continue at `received`.
    case offsetMismatch(received: Int64)
    /// Another request is uploading this attachment now; it holds `received` bytes.
    case busy(received: Int64)
    /// The upload was started with another total size.
    case lengthMismatch(total: Int64)
    /// The bytes hash to `actual`, not to the attachment's name; they were discarded.
    case hashMismatch(actual: String)
    /// The disk (or database) has no room; what was received before stays.
    case insufficientStorage
}

/// The SHA-256 of an upload's first `length` bytes, as the last request left it.
///
/// swift-crypto's `SHA256` is a copy-on-write value (a shared context is copied before it is updated) that is
/// not marked `Sendable`; a running hash is only ever handed from one request to the next under a lock.
package struct RunningHash: @unchecked Sendable {
    package var hasher: SHA256
    package var length: Int64
    /// What else must match for the hash to continue: which partial file, with what total.
    package var identity: [Int64]

    package init(hasher: SHA256, length: Int64, identity: [Int64]) {
        self.hasher = hasher
        self.length = length
        self.identity = identity
    }
}

/// The running hashes of uploads a store left part way, so a request that continues one hashes only its own
/// bytes instead of reading back everything stored: without them, a file sent in chunks cost time in the
/// square of its size (the 50 chunks of a 200 MB file hashed about 5 GB). Bounded: past ``limit`` uploads one
/// is dropped, and read back if it continues.
package final class RunningHashes: Sendable {
    private let hashes = NIOLockedValueBox([AttachmentUploadKey: RunningHash]())
    package static let limit = 256

    package init() {}

    /// Keeps `hash` for the next request of `key`.
    package func keep(_ key: AttachmentUploadKey, _ hash: RunningHash) {
        hashes.withLockedValue { kept in
            if kept.count >= Self.limit, kept[key] == nil, let any = kept.keys.first { kept.removeValue(forKey: any) }
            kept[key] = hash
        }
    }

    /// The hash of `key`'s first `length` bytes when one was kept for exactly those bytes of the same
    /// `identity`; taken out either way (the request that continues the upload keeps the next one).
    package func take(_ key: AttachmentUploadKey, length: Int64, identity: [Int64]) -> SHA256? {
        guard let kept = hashes.withLockedValue({ $0.removeValue(forKey: key) }), kept.length == length, kept.identity == identity else { return nil }
        return kept.hasher
    }
}

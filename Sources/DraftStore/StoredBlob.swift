import Foundation

/// An attachment's bytes as this device holds them, and where moving them to or from the server stands.
public struct StoredBlob: Sendable, Hashable {
    /// Whether the server still needs these bytes from this device.
    public enum Upload: String, Sendable, Hashable {
        /// Nothing to send: the bytes came from the server (or were never attached here).
        case none
        /// Attached on this device; the server may not hold all of them yet.
        case waiting
        /// The server holds them, verified.
        case done
    }

    /// The content's SHA-256, 64 lowercase hex digits: its name on the device and on the server.
    public var sha256: String
    /// Its size.
    public var bytes: Int64
    /// Its media type.
    public var type: String
    /// Whether the verified bytes are on this device (``DraftStore/attachmentFile(_:)`` gives their path).
    public var isStored: Bool
    /// Whether they still have to be uploaded.
    public var upload: Upload
    /// Whether a download was asked for (the record was opened, or downloads run ahead of time).
    public var downloadWanted: Bool
    /// Bytes the server last said it holds (while uploading), or bytes downloaded so far.
    public var transferred: Int64
    /// Transfers of it that failed in a row; reset by one that succeeds.
    public var failures: Int
    /// Not tried again before this moment (it failed recently); nil when it may be tried now.
    public var retryAt: Date?
    /// Why the last transfer failed, for a person.
    public var lastError: String?
}

/// Attachments still to be uploaded from this device: how many and how many bytes the server lacks.
public struct WaitingUploads: Sendable, Hashable {
    /// Attachments the server may not hold completely.
    public var count: Int
    /// Bytes of them the server does not hold yet (as far as the device last heard).
    public var bytes: Int64

    /// Nothing waiting.
    public static let none = WaitingUploads(count: 0, bytes: 0)

    /// Counts of waiting uploads.
    public init(count: Int, bytes: Int64) {
        self.count = count
        self.bytes = bytes
    }
}

/// What one garbage collection of attachments removed.
public struct BlobCollection: Sendable, Hashable {
    /// Hashes whose bytes were removed: nothing on the device refers to them any more.
    public var removed: [String]
    /// Bytes freed.
    public var freedBytes: Int64
}

import Foundation

/// The pure parts of moving an attachment's bytes: which bytes to send or ask for next, and the headers
/// that say so (`Content-Range`, `Range`, `Upload-Offset`, `Attachment-Complete`).
///
/// Upload: `HEAD …/attachments/{sha256}` tells how many bytes the server holds (`Upload-Offset`); each
/// `PUT` sends the next chunk from there with `Content-Range: bytes START-END/TOTAL`. Download: `GET` with
/// `Range: bytes=A-B` from the size of the partial file. Chunks bound the memory a transfer takes,
/// whatever the file's size.
public enum AttachmentHTTP {
    /// The next chunk to send or fetch, as an inclusive byte range; nil when `offset` has reached `total`.
    public static func nextChunk(offset: Int64, total: Int64, chunkSize: Int64) -> ClosedRange<Int64>? {
        guard offset >= 0, offset < total, chunkSize > 0 else { return nil }
        return offset...min(total, offset + chunkSize) - 1
    }

    /// `Content-Range` of a PUT: `bytes START-END/TOTAL`.
    public static func contentRange(_ chunk: ClosedRange<Int64>, total: Int64) -> String {
        "bytes \(chunk.lowerBound)-\(chunk.upperBound)/\(total)"
    }

    /// `Range` of a GET: `bytes=A-B`.
    public static func range(_ chunk: ClosedRange<Int64>) -> String {
        "bytes=\(chunk.lowerBound)-\(chunk.upperBound)"
    }

    /// The server's `Upload-Offset`: bytes it holds. Nil when absent or not a whole number ≥ 0.
    public static func uploadOffset(_ headers: [String: String]) -> Int64? {
        guard let text = headers["upload-offset"]?.trimmingCharacters(in: .whitespaces), let value = Int64(text), value >= 0 else { return nil }
        return value
    }

    /// Whether the server says it holds the whole attachment, verified (`Attachment-Complete: true`).
    public static func isComplete(_ headers: [String: String]) -> Bool {
        headers["attachment-complete"]?.trimmingCharacters(in: .whitespaces).lowercased() == "true"
    }

    /// The start of a `206` answer's `Content-Range: bytes A-B/T` (or `bytes A-B/*`); nil when unreadable.
    public static func responseRangeStart(_ headers: [String: String]) -> Int64? {
        guard let value = headers["content-range"]?.trimmingCharacters(in: .whitespaces), value.hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst("bytes ".count)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        return Int64(spec[..<dash])
    }
}

/// How long one attachment that keeps failing waits before it is tried again: doubling from `first` up
/// to `maximum`. Each attachment backs off on its own, so one that fails holds up neither the records
/// nor the other attachments.
public struct AttachmentBackoff: Sendable, Hashable {
    /// The pause after the first failure.
    public var first: TimeInterval
    /// The longest pause.
    public var maximum: TimeInterval

    /// A backoff from `first` (30 s) doubling up to `maximum` (1 h).
    public init(first: TimeInterval = 30, maximum: TimeInterval = 3600) {
        self.first = first
        self.maximum = maximum
    }

    /// The pause after `failures` failures in a row (1 for the first).
    public func delay(afterFailures failures: Int) -> TimeInterval {
        guard failures > 0 else { return 0 }
        let doublings = Double(min(failures - 1, 40))
        return min(maximum, first * pow(2, doublings))
    }
}

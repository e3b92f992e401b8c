import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServerStorage

/// Serves an attachment's bytes (whole, or the one range asked for) to a member a referencing record grants
/// them to; for anyone else, and for an attachment not stored yet, the same 404 as a missing one. The API route
/// and the web console's link both answer through it.
///
/// The rule (README, "Attachments between members"): a member may download an attachment when they may read
/// a record that references it and either they hold it (sent its bytes, or were shown them before) or the
/// member who put that reference into the record holds it. A reference to a hash whose bytes its writer never
/// had grants nothing, not even to them. Downloading through another's reference makes the reader a holder.
struct AttachmentDownload {
    let storage: any ServerStorage

    /// The reference a download by `userId` goes through, and whether it is their first (they did not hold
    /// the attachment); nil when they may not download it.
    func grant(_ key: AttachmentKey, userID: Int64, role: Role) async throws -> (use: AttachmentUse, stored: StoredAttachment)? {
        guard let stored = try await storage.storedAttachment(key, userID: userID) else { return nil }
        let readable = try await storage.attachmentUses(key).filter { RecordAccess.canRead(authorID: $0.authorID, shared: $0.shared, userID: userID, role: role) }
        guard let use = readable.first(where: { stored.held || $0.grants }) else { return nil }
        return (use, stored)
    }

    func response(_ key: AttachmentKey, userID: Int64, role: Role, range header: String?) async throws -> Response {
        guard let (use, stored) = try await grant(key, userID: userID, role: role) else { throw Problem.notFound("attachment") }
        guard let total = try await storage.attachments.stored(key) else { throw Problem.notFound("attachment") }
        if !stored.held { try await storage.addAttachmentHolder(key, userID: userID) }
        var mediaType = stored.mediaType
        if mediaType == nil {
            // Stored by a version that did not note the type: read it from the first bytes now.
            mediaType = AttachmentMediaType.of(try await storage.attachments.leadingBytes(key, count: AttachmentMediaType.prefixLength) ?? Data())
        }
        var part: ClosedRange<Int64>?
        switch ByteRanges.download(header, total: total) {
        case .whole: part = nil
        case .part(let range): part = range
        case .unsatisfiable:
            throw Problem(
                .rangeNotSatisfiable, "range-not-satisfiable", title: "Range not satisfiable",
                detail: "The attachment is \(total) bytes long; ask for a range within it, as \"Range: bytes=0-\(max(0, total - 1))\".",
                field: "Range", headers: [.contentRange: "bytes */\(total)"])
        }
        guard let bytes = try await storage.attachments.read(key, range: part) else { throw Problem.notFound("attachment") }
        var headers = Self.headers(mediaType: mediaType ?? AttachmentMediaType.unknown, name: use.name, sha256: key.sha256)
        let length = bytes.total == 0 ? 0 : bytes.range.upperBound - bytes.range.lowerBound + 1
        headers[.contentLength] = String(length)
        if part != nil { headers[.contentRange] = "bytes \(bytes.range.lowerBound)-\(bytes.range.upperBound)/\(bytes.total)" }
        let pieces = bytes.pieces
        return Response(
            status: part == nil ? .ok : .partialContent, headers: headers,
            body: ResponseBody(contentLength: Int(length)) { writer in
                for try await piece in pieces { try await writer.write(ByteBuffer(data: piece)) }
                try await writer.finish(nil)
            })
    }

    /// The attachment's type as its bytes say (``AttachmentMediaType``: shown in place when it is a known
    /// photo, audio, video or PDF format, else downloaded), the file name of the reference the reader came
    /// through, its hash as the ETag, and a policy that keeps a file opened in a browser from running
    /// anything on the console's origin.
    static func headers(mediaType: String, name: String, sha256: String) -> HTTPFields {
        let inline = AttachmentMediaType.isInline(mediaType)
        let fallback = String(name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? Character($0) : "_" })
        let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: ".-_"))) ?? fallback
        return [
            .contentType: mediaType,
            .eTag: "\"\(sha256)\"",
            .acceptRanges: "bytes",
            .cacheControl: "private, max-age=31536000, immutable",
            .contentDisposition: "\(inline ? "inline" : "attachment"); filename=\"\(fallback)\"; filename*=UTF-8''\(encoded)",
            .contentSecurityPolicy: "default-src 'none'; img-src 'self'; media-src 'self'; sandbox",
            .xContentTypeOptions: "nosniff",
        ]
    }
}

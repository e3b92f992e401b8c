import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServerStorage

/// Serves an attachment's bytes (whole, or the one range asked for) to a member who may read a record that
/// references it; for anyone else, and for an attachment not stored yet, the same 404 as a missing one. The
/// API route and the web console's link both answer through it.
struct AttachmentDownload {
    let storage: any ServerStorage

    func response(_ key: AttachmentKey, userId: Int64, role: Role, range header: String?) async throws -> Response {
        let uses = try await storage.attachmentUses(key)
        guard let use = uses.first(where: { RecordAccess.canRead(authorId: $0.authorId, shared: $0.shared, userId: userId, role: role) }) else {
            throw Problem.notFound("attachment")
        }
        let status = try await storage.attachments.status(key)
        guard status.complete else { throw Problem.notFound("attachment") }
        var part: ClosedRange<Int64>?
        switch ByteRanges.download(header, total: status.received) {
        case .whole: part = nil
        case .part(let range): part = range
        case .unsatisfiable:
            throw Problem(
                .rangeNotSatisfiable, "range-not-satisfiable", title: "Range not satisfiable",
                detail: "The attachment is \(status.received) bytes long; ask for a range within it, as \"Range: bytes=0-\(max(0, status.received - 1))\".",
                field: "Range", headers: [.contentRange: "bytes */\(status.received)"])
        }
        guard let bytes = try await storage.attachments.read(key, range: part) else { throw Problem.notFound("attachment") }
        var headers = Self.headers(use: use, sha256: key.sha256)
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

    /// The attachment's type as its reference gives it, its hash as the ETag, and a policy that keeps a file
    /// opened in a browser from running anything on the console's origin (an uploaded page or SVG would).
    static func headers(use: AttachmentUse, sha256: String) -> HTTPFields {
        let inline = ["image/jpeg", "image/png", "image/gif", "image/webp", "image/heic", "audio/", "video/", "application/pdf"].contains { use.type.lowercased().hasPrefix($0) }
        let fallback = String(use.name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? Character($0) : "_" })
        let encoded = use.name.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: ".-_"))) ?? fallback
        return [
            .contentType: use.type,
            .eTag: "\"\(sha256)\"",
            .acceptRanges: "bytes",
            .cacheControl: "private, max-age=31536000, immutable",
            .contentDisposition: "\(inline ? "inline" : "attachment"); filename=\"\(fallback)\"; filename*=UTF-8''\(encoded)",
            .contentSecurityPolicy: "default-src 'none'; img-src 'self'; media-src 'self'; sandbox",
            .xContentTypeOptions: "nosniff",
        ]
    }
}

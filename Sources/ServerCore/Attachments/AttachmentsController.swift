import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServerStorage

/// `HEAD`, `PUT` and `GET /v1/projects/{project}/attachments/{sha256}`: resumable uploads that stream to the
/// ``AttachmentStore`` and downloads for those a referencing record grants them to (Schema/openapi.yaml).
///
/// A hash proves nothing (README, "Attachments between members"): each member's upload of a hash is their own,
/// HEAD and PUT tell a member only about their own upload (complete once they hold the attachment), and a
/// member who does not hold a stored attachment sends its bytes like anyone else, which is how they come to hold it.
struct AttachmentsController {
    let services: ServerServices

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.head("attachments/:sha256", use: head)
        group.put("attachments/:sha256", use: put)
        group.get("attachments/:sha256", use: get)
    }

    /// The attachment the path names; 404 (like any missing thing) for a name that is not a SHA-256.
    func key(_ context: AppRequestContext, projectID: Int64) throws -> AttachmentKey {
        guard let sha256 = context.parameters.get("sha256"), AttachmentKey.isValidDigest(sha256) else { throw Problem.notFound("attachment") }
        return AttachmentKey(projectID: projectID, sha256: sha256)
    }

    /// Any member may upload: every role pushes records.
    @Sendable func head(_ request: Request, context: AppRequestContext) async throws -> Response {
        let key = try key(context, projectID: try context.membership().projectID)
        let userID = try context.requirePrincipal().userID
        return Response(status: .ok, headers: Self.uploadHeaders(try await status(key, userID: userID)))
    }

    /// Where `userId`'s upload of the attachment stands: complete when they hold it, else what they sent of
    /// it (another member's upload, or the attachment being stored, shows nothing).
    func status(_ key: AttachmentKey, userID: Int64) async throws -> AttachmentStatus {
        if let stored = try await services.storage.storedAttachment(key, userID: userID), stored.held {
            return AttachmentStatus(received: stored.bytes, total: stored.bytes, complete: true)
        }
        let status = try await services.storage.attachments.status(key, uploader: userID)
        // Found whole and verified just now (its last request ended between the last byte and the check).
        if status.complete { try await noteStored(key, bytes: status.received, holder: userID) }
        return status
    }

    @Sendable func put(_ request: Request, context: AppRequestContext) async throws -> Response {
        let key = try key(context, projectID: try context.membership().projectID)
        let userID = try context.requirePrincipal().userID
        let range: ByteRanges.Upload
        do {
            range = try checkedRange(request)
        } catch let problem as Problem {
            // Refused before anything was read; the answer still says where the upload stands.
            throw problem.with(uploadOffset: (try? await status(key, userID: userID))?.received ?? 0)
        }
        return try await upload(request, key: key, userID: userID, range: range, context: context)
    }

    /// The request's Content-Range, checked against its Content-Length and the size limit.
    func checkedRange(_ request: Request) throws -> ByteRanges.Upload {
        guard let header = request.headers[.contentRange] else {
            throw Problem.badRequest("An upload needs \"Content-Range: bytes START-END/TOTAL\" (END inclusive), START being the Upload-Offset a HEAD reports.", field: "Content-Range")
        }
        guard let range = ByteRanges.upload(header) else {
            throw Problem.badRequest("Content-Range \"\(header)\" is not \"bytes START-END/TOTAL\" with START ≤ END < TOTAL (or \"bytes */0\" for an empty file).", field: "Content-Range")
        }
        guard range.total <= services.limits.maxAttachmentBytes else {
            throw Problem.tooLarge(
                "The attachment is \(range.total) bytes; this server takes attachments of at most \(services.limits.maxAttachmentBytes) bytes (serve --max-attachment-bytes).",
                slug: "attachment-too-large", field: "Content-Range")
        }
        if let declared = request.headers[.contentLength].flatMap(Int64.init), declared != range.length {
            throw Problem.badRequest("Content-Length is \(declared) but Content-Range \"\(header)\" covers \(range.length) bytes; send exactly the bytes of the range.", field: "Content-Length")
        }
        return range
    }

    func upload(_ request: Request, key: AttachmentKey, userID: Int64, range: ByteRanges.Upload, context: AppRequestContext) async throws -> Response {
        let store = services.storage.attachments
        let current = try await status(key, userID: userID)
        if current.complete { return Response(status: .ok, headers: Self.uploadHeaders(current)) }
        let header = request.headers[.contentRange] ?? ""
        // The whole rest of the upload must fit above the reserve, not just this request's piece.
        let needed = range.total - range.start
        if needed > 0, let free = services.storage.freeBytes, free - needed < services.limits.storageReserveBytes {
            throw Problem.insufficientStorage(
                "The server cannot take this attachment: the rest of it (\(needed) bytes) does not fit in its free space (\(free) bytes) above the \(services.limits.storageReserveBytes) bytes it keeps for the database (serve --storage-reserve-bytes). Nothing was written; what it received before is kept. Try again later; the server's admin must free space."
            ).with(uploadOffset: range.start)
        }
        try await checkQuotas(key, userID: userID, needed: needed, offset: range.start)
        let upload: any AttachmentUpload
        do {
            upload = try await store.beginUpload(key, uploader: userID, offset: range.start, total: range.total, length: range.length)
        } catch let error as AttachmentError {
            throw Self.problem(error, key: key)
        }
        // Bytes go to storage as they arrive; a cut connection keeps what came (the next HEAD reports it).
        var received = await upload.received
        // A chunked body longer than its range: the range's bytes are kept (and checked, when they are the last),
        // the rest is refused.
        var overflowed = false
        do {
            for try await buffer in request.body {
                let room = range.end - received
                if Int64(buffer.readableBytes) > room {
                    if room > 0, let head = buffer.getData(at: buffer.readerIndex, length: Int(room)) { try await upload.append(head) }
                    received = range.end
                    overflowed = true
                    break
                }
                if let data = buffer.getData(at: buffer.readerIndex, length: buffer.readableBytes) { try await upload.append(data) }
                received += Int64(buffer.readableBytes)
            }
        } catch let error as AttachmentError {
            try? await Self.detached { try await upload.suspend() }
            let kept = await upload.received
            throw Self.problem(error, key: key, offset: kept)
        } catch {
            // The connection broke or timed out: keep what arrived, durably.
            try? await Self.detached { try await upload.suspend() }
            let kept = await upload.received
            context.logger.info("Upload cut short", metadata: ["attachment": .string(key.sha256), "received": .stringConvertible(kept)])
            throw error
        }
        guard received == range.end else {
            try await Self.detached { try await upload.suspend() }
            throw Problem.badRequest("The body ended after \(received - range.start) of the \(range.length) bytes Content-Range \"\(header)\" announces; continue from Upload-Offset.", field: "Content-Range")
                .with(uploadOffset: received)
        }
        let tooLong = Problem.badRequest(
            "The body is longer than the \(range.length) bytes Content-Range \"\(header)\" announces; the bytes of the range were kept, the rest refused.",
            field: "Content-Range")
        guard range.end == range.total else {
            try await Self.detached { try await upload.suspend() }
            if overflowed { throw tooLong.with(uploadOffset: received) }
            return Response(status: .noContent, headers: Self.uploadHeaders(AttachmentStatus(received: received, total: range.total, complete: false)))
        }
        do {
            try await Self.detached { try await upload.complete() }
        } catch let error as AttachmentError {
            throw Self.problem(error, key: key, offset: 0)
        }
        try await noteStored(key, bytes: range.total, holder: userID)
        services.metrics.recordAttachmentStored(bytes: range.total)
        if overflowed { throw tooLong.with(uploadOffset: range.total) }
        return Response(status: .created, headers: Self.uploadHeaders(AttachmentStatus(received: range.total, total: range.total, complete: true)))
    }

    /// Refuses an upload whose rest would take the project past its attachment quota (`serve
    /// --project-attachment-quota-bytes`) or the member past theirs (`--user-attachment-quota-bytes`), saying
    /// what is held and the limit. Both count the stored attachments (a member's: those they stored first) and
    /// the bytes of uploads in progress (a member's: their own).
    func checkQuotas(_ key: AttachmentKey, userID: Int64, needed: Int64, offset: Int64) async throws {
        guard needed > 0 else { return }
        let storage = services.storage
        if let quota = services.limits.projectAttachmentQuotaBytes {
            let used = try await storage.storedAttachmentBytes(projectID: key.projectID, storedBy: nil)
                + storage.attachments.partialBytes(projectID: key.projectID, uploader: nil)
            if used + needed > quota {
                throw Self.quotaProblem(
                    title: "Project attachment quota exceeded", whose: "The project's attachment quota", quota: quota, used: used, needed: needed,
                    option: "--project-attachment-quota-bytes", offset: offset)
            }
        }
        if let quota = services.limits.userAttachmentQuotaBytes {
            let used = try await storage.storedAttachmentBytes(projectID: key.projectID, storedBy: userID)
                + storage.attachments.partialBytes(projectID: key.projectID, uploader: userID)
            if used + needed > quota {
                throw Self.quotaProblem(
                    title: "Member attachment quota exceeded", whose: "Your attachment quota in this project", quota: quota, used: used, needed: needed,
                    option: "--user-attachment-quota-bytes", offset: offset)
            }
        }
    }

    static func quotaProblem(title: String, whose: String, quota: Int64, used: Int64, needed: Int64, option: String, offset: Int64) -> Problem {
        Problem(
            .init(code: 507, reasonPhrase: "Insufficient Storage"), "attachment-quota-exceeded", title: title,
            detail: "\(whose) is \(quota) bytes and \(used) bytes of it are taken (stored attachments and uploads in progress, the \(offset) bytes this upload holds among them); the rest of this upload (\(needed) bytes) would pass it (serve \(option)). Nothing was written; what was received before is kept. Ask the server's admin to raise the quota or remove attachments no record needs.",
            field: "Content-Range"
        ).with(uploadOffset: offset)
    }

    /// Tells the database that `holder` sent the attachment's bytes, verified: the first time anyone does, it
    /// is noted stored (of the media type its first bytes say), which moves the records waiting for it forward
    /// in the change feed. A crash between storing and telling leaves the holder to send the bytes again.
    func noteStored(_ key: AttachmentKey, bytes: Int64, holder: Int64) async throws {
        let prefix = try await services.storage.attachments.leadingBytes(key, count: AttachmentMediaType.prefixLength) ?? Data()
        _ = try await services.storage.attachmentStored(key, bytes: bytes, holder: holder, mediaType: AttachmentMediaType.of(prefix))
    }

    @Sendable func get(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        let key = try key(context, projectID: membership.projectID)
        return try await AttachmentDownload(storage: services.storage).response(key, userID: principal.userID, role: membership.role, range: request.headers[.range])
    }

    /// Runs `body` in a task of its own, so that a request cancelled by its closed connection still finishes
    /// writing what it received.
    static func detached(_ body: @escaping @Sendable () async throws -> Void) async throws {
        try await Task { try await body() }.value
    }

    static func uploadHeaders(_ status: AttachmentStatus) -> HTTPFields {
        var headers: HTTPFields = [.uploadOffset: String(status.received), .attachmentComplete: status.complete ? "true" : "false", .cacheControl: "no-store"]
        if let total = status.total { headers[.uploadLength] = String(total) }
        return headers
    }

    static func problem(_ error: AttachmentError, key: AttachmentKey, offset: Int64? = nil) -> Problem {
        switch error {
        case .offsetMismatch(let received):
            return Problem(
                .conflict, "upload-offset-mismatch", title: "Upload offset mismatch",
                detail: "The server holds \(received) bytes of this attachment: continue the upload at byte \(received) (Upload-Offset).").with(uploadOffset: received)
        case .busy(let received):
            return Problem(
                .conflict, "upload-offset-mismatch", title: "Upload in progress",
                detail: "Another request of yours is uploading this attachment now (\(received) bytes held). Ask again with HEAD in a moment and continue from its Upload-Offset.").with(uploadOffset: received)
        case .lengthMismatch(let total):
            return Problem(
                .conflict, "upload-length-mismatch", title: "Upload length mismatch",
                detail: "This upload was started as \(total) bytes long. Continue it with that total, or start again from byte 0 to replace it.",
                field: "Content-Range", headers: [.uploadLength: String(total)]).with(uploadOffset: offset ?? 0)
        case .hashMismatch(let actual):
            return Problem(
                .unprocessableContent, "attachment-hash-mismatch", title: "Attachment does not match its hash",
                detail: "The bytes received hash to \(actual), not to \(key.sha256); they were discarded. Upload the file again from byte 0.").with(uploadOffset: 0)
        case .insufficientStorage:
            return Problem.insufficientStorage(
                "The server has no room left for this attachment; what it received before is kept. Try again later; the server's admin must free space.").with(uploadOffset: offset ?? 0)
        }
    }
}

extension Problem {
    /// The problem with the `Upload-Offset` header every attachment upload answer carries.
    func with(uploadOffset: Int64) -> Problem {
        var copy = self
        copy.headers[.uploadOffset] = String(uploadOffset)
        return copy
    }
}

extension HTTPField.Name {
    /// Bytes the server holds of an attachment.
    static let uploadOffset = Self("Upload-Offset")!
    /// An attachment's whole size, once known.
    static let uploadLength = Self("Upload-Length")!
    /// `true` when the attachment is stored and verified.
    static let attachmentComplete = Self("Attachment-Complete")!
}

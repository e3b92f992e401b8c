import DraftStore
import Foundation
import FormModel
import SyncCore

/// Why one attachment could not be moved this time; it backs off on its own and nothing else waits for it.
struct AttachmentTransferFailure: Error, Sendable {
    var message: String
}

extension SyncEngine {
    /// Uploads every attachment attached here that the server may lack and that is not backing off, after
    /// the records are pushed. Returns how many the server now holds. A failing attachment is recorded
    /// with its reason and a later retry time, and the others go on.
    func uploadAttachments(_ progress: SyncProgressTracker) async throws -> Int {
        let due = try await storage("listing attachments to upload") { try await store.uploadsDue() }
        guard !due.isEmpty else { return 0 }
        progress.update {
            $0.uploadTotal = due.count
            $0.uploadBytesTotal = due.reduce(0) { $0 + $1.bytes }
        }
        var uploaded = 0
        for blob in due {
            try Task.checkCancellation()
            do {
                try await upload(blob, progress)
                try await storage("recording an upload") { try await store.noteUploaded(blob.sha256) }
                uploaded += 1
                progress.update { $0.uploaded += 1 }
            } catch let failure as AttachmentTransferFailure {
                try await backOff(blob, failure.message)
            } catch let error as DraftStoreError {
                try await backOff(blob, error.message)
            }
        }
        return uploaded
    }

    /// Sends one attachment: HEAD for the server's offset, then PUTs of the following chunks. A cut
    /// connection or a busy server asks for the offset again, after the retry policy's delay, and continues
    /// from there, within the policy's attempts without progress.
    func upload(_ blob: BlobTransfer, _ progress: SyncProgressTracker) async throws {
        let url = configuration.url("attachments/\(blob.sha256)")
        let name = "attachment \(blob.sha256.prefix(12))… (\(AttachmentReference.formatSize(blob.bytes)))"
        var offset: Int64?
        var fruitless = 0
        // The most the server has said it holds: only going past it is progress (a HEAD after a busy answer
        // reporting the same offset again is not).
        var most: Int64 = -1
        var reported: Int64 = 0
        func advance(to held: Int64) async throws {
            if held > most {
                fruitless = 0
                most = held
            }
            offset = held
            progress.update { $0.uploadedBytes += max(0, held - reported) }
            reported = max(reported, held)
            try await storage("recording an upload") { try await store.noteUploadProgress(blob.sha256, serverHolds: held) }
        }
        while true {
            try Task.checkCancellation()
            do {
                guard let start = offset else {
                    let head = try await transfer(TransportRequest(method: "HEAD", url: url))
                    guard head.status == 200 else { throw failure(head, doing: "asking the server about \(name)") }
                    if AttachmentHTTP.isComplete(head.headers) { return }
                    try await advance(to: min(AttachmentHTTP.uploadOffset(head.headers) ?? 0, blob.bytes))
                    continue
                }
                let chunk = AttachmentHTTP.nextChunk(offset: start, total: blob.bytes, chunkSize: configuration.attachmentChunkBytes)
                var request = TransportRequest(method: "PUT", url: url, headers: ["Content-Type": blob.type])
                if let chunk {
                    request.headers["Content-Range"] = AttachmentHTTP.contentRange(chunk, total: blob.bytes)
                    request.body = try store.attachmentBytes(blob.sha256, chunk)
                } else {
                    // Every byte is there but the server has not said complete (an empty file): say the total.
                    request.headers["Content-Range"] = "bytes */\(blob.bytes)"
                    request.body = Data()
                }
                let response = try await transfer(request)
                let held = AttachmentHTTP.uploadOffset(response.headers)
                switch response.status {
                case 201:
                    return
                case 200..<300:
                    // Complete: said so, or every byte held (the server verifies the hash at the last byte).
                    if AttachmentHTTP.isComplete(response.headers) || held == blob.bytes { return }
                    try await advance(to: min(held ?? chunk.map { $0.upperBound + 1 } ?? start, blob.bytes))
                    if chunk == nil { fruitless += 1 }
                case 409:
                    if let held, held != start {
                        // An earlier cut left the server elsewhere: continue from its number.
                        try await advance(to: min(held, blob.bytes))
                    } else {
                        // The offset sent back unchanged: another request of this member (one cut on the way,
                        // which the server is still reading) holds the upload. Sending the chunk again at once
                        // would only cross the wire to be refused again: wait, then ask with HEAD.
                        offset = nil
                    }
                    fruitless += 1
                case 408, 429, 500, 502, 503, 504:
                    offset = nil
                    fruitless += 1
                default:
                    throw failure(response, doing: "uploading \(name)")
                }
            } catch let error as TransportError {
                offset = nil
                fruitless += 1
                if fruitless >= configuration.retry.maxAttempts {
                    throw AttachmentTransferFailure(message: "Could not upload \(name): \(error.description) It is tried again later; the records are not held up.")
                }
            }
            if fruitless >= configuration.retry.maxAttempts {
                throw AttachmentTransferFailure(message: "Could not upload \(name): the server made no progress after \(fruitless) attempts. It is tried again later; the records are not held up.")
            }
            if fruitless > 0, offset == nil {
                let delay = configuration.retry.delay(beforeRetry: fruitless)
                progress.retrying("\(name): resuming in \(String(format: "%.1f", delay)) s")
                try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
            }
        }
    }

    /// Downloads the attachments that were asked for (or, ahead of time, every one a record refers to
    /// that is not here), each resumably from its partial file and verified by its hash before it is kept.
    func downloadAttachments(_ progress: SyncProgressTracker) async throws -> Int {
        let due = try await storage("listing attachments to download") { try await store.downloadsDue(ahead: configuration.attachmentDownloads == .ahead) }
        guard !due.isEmpty else { return 0 }
        progress.update { $0.downloadTotal = due.count }
        var downloaded = 0
        for blob in due {
            try Task.checkCancellation()
            do {
                try await download(blob)
                downloaded += 1
                progress.update { $0.downloaded += 1 }
            } catch let failure as AttachmentTransferFailure {
                try await backOff(blob, failure.message)
            } catch let error as DraftStoreError {
                try await backOff(blob, error.message)
            }
        }
        return downloaded
    }

    /// Fetches one attachment with `Range` requests from the size of its partial file, then verifies it.
    func download(_ blob: BlobTransfer) async throws {
        let url = configuration.url("attachments/\(blob.sha256)")
        let name = "attachment \(blob.sha256.prefix(12))… (\(AttachmentReference.formatSize(blob.bytes)))"
        var offset = store.partialDownloadSize(blob.sha256)
        if offset > blob.bytes {
            store.discardPartialDownload(blob.sha256)
            offset = 0
        }
        var fruitless = 0
        while let chunk = AttachmentHTTP.nextChunk(offset: offset, total: blob.bytes, chunkSize: configuration.attachmentChunkBytes) {
            try Task.checkCancellation()
            do {
                let response = try await transfer(TransportRequest(method: "GET", url: url, headers: ["Range": AttachmentHTTP.range(chunk)]))
                switch response.status {
                case 206 where AttachmentHTTP.responseRangeStart(response.headers) == chunk.lowerBound && !response.body.isEmpty:
                    try store.writeDownloadedBytes(blob.sha256, at: offset, response.body.prefix(Int(chunk.upperBound - chunk.lowerBound + 1)))
                    offset += Int64(min(response.body.count, Int(chunk.upperBound - chunk.lowerBound + 1)))
                    fruitless = 0
                case 200 where Int64(response.body.count) == blob.bytes:
                    // The server sent the whole file instead of the range.
                    try store.writeDownloadedBytes(blob.sha256, at: 0, response.body)
                    offset = blob.bytes
                case 416:
                    store.discardPartialDownload(blob.sha256)
                    offset = 0
                    fruitless += 1
                case 404:
                    throw AttachmentTransferFailure(message: "The server does not have \(name) yet (or this login may not read it); it is asked for again later.")
                case 408, 429, 500, 502, 503, 504, 200, 206:
                    fruitless += 1
                default:
                    throw failure(response, doing: "downloading \(name)")
                }
            } catch let error as TransportError {
                fruitless += 1
                if fruitless >= configuration.retry.maxAttempts {
                    throw AttachmentTransferFailure(message: "Could not download \(name): \(error.description) It is tried again later.")
                }
            }
            if fruitless >= configuration.retry.maxAttempts {
                throw AttachmentTransferFailure(message: "Could not download \(name): the server made no progress after \(fruitless) attempts. It is tried again later.")
            }
            if fruitless > 0 {
                try await Task.sleep(nanoseconds: UInt64(configuration.retry.delay(beforeRetry: fruitless) * 1_000_000_000))
            }
        }
        guard try await store.finishDownload(blob) else {
            throw AttachmentTransferFailure(message: "The downloaded \(name) does not match its hash; it was thrown away and is downloaded again later.")
        }
    }

    /// Sends one request of a transfer with the login's token.
    func transfer(_ request: TransportRequest) async throws -> TransportResponse {
        var request = request
        request.headers["Authorization"] = "Bearer \(configuration.token)"
        return try await transport.send(request)
    }

    /// A refusal as a failure of this attachment alone, in the server's words.
    func failure(_ response: TransportResponse, doing: String) -> AttachmentTransferFailure {
        let problem = try? JSONDecoder().decode(ProblemDetails.self, from: response.body)
        let error = SyncError.from(status: response.status, problem: problem, doing: doing)
        return AttachmentTransferFailure(message: error.message)
    }

    /// Records a failed attachment and when to try it again.
    func backOff(_ blob: BlobTransfer, _ message: String) async throws {
        let retryAt = Date().addingTimeInterval(configuration.attachmentBackoff.delay(afterFailures: blob.failures + 1))
        logger.notice("Attachment transfer failed; retrying later", metadata: ["sha256": "\(blob.sha256)", "failures": "\(blob.failures + 1)", "reason": "\(message)"])
        try await storage("recording a failed transfer") { try await store.noteTransferFailed(blob, message: message, retryAt: retryAt) }
    }
}

import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import Logging
import SyncClient
import SyncCore
import Testing

/// Counts the bytes of request bodies a transport sends, by method.
final class BodyCountingTransport: HTTPTransport, @unchecked Sendable {
    let inner: any HTTPTransport
    private let lock = NSLock()
    private var sent: [String: Int] = [:]

    init(_ inner: any HTTPTransport) { self.inner = inner }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        lock.withLock { sent[request.method, default: 0] += request.body?.count ?? 0 }
        return try await inner.send(request)
    }

    func bodyBytes(_ method: String) -> Int { lock.withLock { sent[method] ?? 0 } }
}

/// Attachments through the real fieldsheet-server on loopback with libcurl: a record syncs before its
/// photo, the photo's upload resumes after a cut connection from where the server stopped, and another
/// device downloads it when the record is opened, verified by its hash.
struct AttachmentSyncTests {
    @Test func aCutUploadResumesAndAnotherDeviceDownloadsThePhotoWhenItOpensTheRecord() async throws {
        let fixture = try await SyncFixture(forms: [SampleForms.damageReport()])
        let collector = try await fixture.user("alice")
        let reviewer = try await fixture.user("rita", role: "reviewer")
        let proxy = try FaultProxy(targetPort: fixture.server.port)
        proxy.faultedRequests = "PUT "
        let device = try fixture.device(token: collector, url: proxy.url, retry: RetryPolicy(maxAttempts: 8, initialDelay: 0.02, maxDelay: 0.2, deadline: 30))
        // 256 KiB chunks on a 6 MB file: the proportion of the default 4 MiB chunks on a 100 MB photo set, so a
        // chunk sent twice (a PUT whose answer came too late on a loaded machine) stays inside the bound too.
        device.configuration.attachmentChunkBytes = 1 << 18
        try await device.sync()
        let size = 6_000_000
        let photo = device.home.file("IMG_0042.jpg")
        SampleForms.writeRandomFile(photo, size: size, seed: 42)
        print("seed 42")
        let session = try await device.store.newRecord(formID: "damage-report")
        try await session.set("site", to: .text("Depot"))
        try await session.attach("photo", file: photo)
        let reference = try #require(await session.attachments["photo"])
        #expect(try await session.complete() == .submitted)
        #expect(try await device.store.waitingUploads() == WaitingUploads(count: 1, bytes: Int64(size)))

        // The third PUT is cut after 40 KB of its 256 KiB; the upload goes on from what the server kept.
        proxy.enqueue([.cutRequest(bytes: 40_000)])
        let counting = BodyCountingTransport(CurlTransport())
        var logger = Logger(label: "attach-test")
        logger.logLevel = .critical
        let engine = SyncEngine(store: device.store, transport: counting, configuration: device.configuration, logger: logger)
        try await engine.sync()
        #expect(proxy.faultsUsed == 1)
        #expect(try await device.store.waitingUploads() == .none)
        #expect(try await device.store.blob(reference.sha256)?.upload == .done)
        // What crossed the wire: the cut request counts only the bytes that reached the server (the transport
        // was handed its whole chunk), and the next PUT starts where those ended.
        let sentBefore = proxy.relayedRequestBytes
        #expect(sentBefore <= size * 11 / 10, "sent \(sentBefore) bytes over the wire for a \(size)-byte file")
        #expect(counting.bodyBytes("PUT") <= size * 11 / 10, "sent \(counting.bodyBytes("PUT")) bytes of chunks for a \(size)-byte file")

        // A reviewer's device pulls the record; opening it asks for the photo, and the next sync fetches it.
        let office = try fixture.device(token: reviewer)
        office.configuration.attachmentChunkBytes = 1 << 20
        try await office.sync()
        #expect(office.store.attachmentFile(reference.sha256) == nil)
        let opened = try await office.store.editSubmitted(session.recordID)
        #expect(try await office.store.syncStatus().wantedDownloads == 1)
        try await opened.dismiss(reason: .escape)
        try await office.sync()
        #expect(office.store.attachmentFile(reference.sha256) != nil)
        #expect(try office.store.attachmentData(reference.sha256) == Data(contentsOf: URL(fileURLWithPath: photo)))
        #expect(try await office.store.record(session.recordID)?.missingOnServer == [])
    }

    @Test func aRecordSyncsBeforeItsPhotoAndShowsAsWaitingForIt() async throws {
        let fixture = try await SyncFixture(forms: [SampleForms.damageReport()])
        let collector = try await fixture.user("alice")
        let reviewer = try await fixture.user("rita", role: "reviewer")
        let device = try fixture.device(token: collector)
        try await device.sync()
        let photo = device.home.file("a.jpg")
        SampleForms.writeRandomFile(photo, size: 100_000, seed: 7)
        let session = try await device.store.newRecord(formID: "damage-report")
        try await session.set("site", to: .text("Depot"))
        try await session.attach("photo", file: photo)
        #expect(try await session.complete() == .submitted)
        // The upload keeps failing (the server is told the wrong size): the record still reaches the server.
        try await device.store.noteTransferFailed(
            BlobTransfer(sha256: try #require(await session.attachments["photo"]).sha256, bytes: 100_000, type: "image/jpeg", failures: 0),
            message: "test: held back", retryAt: Date().addingTimeInterval(3600))
        try await device.sync()
        #expect(try await device.store.outboxCount() == 0)
        let office = try fixture.device(token: reviewer)
        try await office.sync()
        #expect(try await office.store.record(session.recordID)?.missingOnServer.count == 1)
        #expect(try await office.store.syncStatus().recordsWaitingForAttachments == 1)
    }
}

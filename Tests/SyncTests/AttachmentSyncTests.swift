import DraftStore
import FieldSheetTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif
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

/// Records the method of each request a transport sends and the status of each answer, in order.
final class ExchangeRecordingTransport: HTTPTransport, @unchecked Sendable {
    let inner: any HTTPTransport
    private let lock = NSLock()
    private var log: [(method: String, status: Int?)] = []

    init(_ inner: any HTTPTransport) { self.inner = inner }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        do {
            let response = try await inner.send(request)
            lock.withLock { log.append((request.method, response.status)) }
            return response
        } catch {
            lock.withLock { log.append((request.method, nil)) }
            throw error
        }
    }

    var exchanges: [(method: String, status: Int?)] { lock.withLock { log } }
}

/// An upload request of the same member held open on a raw connection: headers and the first bytes of
/// its body sent, the rest never, so the server holds the attachment's upload as busy until it is closed.
final class HeldUploadRequest {
    private let socket: Int32

    init(port: Int, path: String, token: String, total: Int, chunk: Int, first: Data) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0, "connecting to the server on port \(port)")
        let head = "PUT \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nContent-Type: image/jpeg\r\n"
            + "Content-Range: bytes 0-\(chunk - 1)/\(total)\r\nContent-Length: \(chunk)\r\n\r\n"
        let bytes = Data(head.utf8) + first
        let written = bytes.withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
        try #require(written == bytes.count, "writing the held request")
    }

    func close() { Glibc.close(socket) }
}

/// Attachments through the real fieldsheet-server on loopback with libcurl: a record syncs before its
/// photo, the photo's upload resumes after a cut connection from where the server stopped, and another
/// device downloads it when the record is opened, verified by its hash.
struct AttachmentSyncTests {
    /// A damage report submitted on `device` with a photo of `size` random bytes (`seed`, printed) attached.
    static func submitDamageReport(on device: TestDevice, photo name: String, size: Int, seed: UInt64) async throws -> (photo: String, session: FormSession, reference: AttachmentReference) {
        let photo = device.home.file(name)
        SampleForms.writeRandomFile(photo, size: size, seed: seed)
        print("seed \(seed)")
        let session = try await device.store.newRecord(formID: "damage-report")
        try await session.set("site", to: .text("Depot"))
        try await session.attach("photo", file: photo)
        let reference = try #require(await session.attachments["photo"])
        #expect(try await session.complete() == .submitted)
        return (photo, session, reference)
    }

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
        let (photo, session, reference) = try await Self.submitDamageReport(on: device, photo: "IMG_0042.jpg", size: size, seed: 42)
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

    /// The server answers 409 with the offset unchanged while another request of the same member still
    /// holds the upload (one cut on the way that the server is still reading): the device waits and asks
    /// again with HEAD instead of sending the same chunk straight back to be refused, and finishes the upload
    /// once the other request ends.
    @Test func aBusyUploadWaitsAndAsksAgainInsteadOfResendingItsChunk() async throws {
        let fixture = try await SyncFixture(forms: [SampleForms.damageReport()])
        let collector = try await fixture.user("alice")
        let device = try fixture.device(token: collector, retry: RetryPolicy(maxAttempts: 20, initialDelay: 0.05, maxDelay: 0.5, deadline: 60))
        device.configuration.attachmentChunkBytes = 1 << 16
        try await device.sync()
        let size = 300_000
        let (photo, _, reference) = try await Self.submitDamageReport(on: device, photo: "busy.jpg", size: size, seed: 9)

        // Another request of alice's holds the upload: its first 1,000 bytes arrived, the rest never comes.
        let url = try #require(URL(string: device.configuration.url("attachments/\(reference.sha256)")))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: photo))
        let held = try HeldUploadRequest(port: fixture.server.port, path: url.path, token: collector, total: size, chunk: 1 << 16, first: bytes.prefix(1_000))
        let probe = CurlTransport()
        let holding = try await eventually(timeout: 60) {
            let head = try await probe.send(TransportRequest(method: "HEAD", url: url.absoluteString, headers: ["Authorization": "Bearer \(collector)"]))
            return head.headers["upload-offset"] == "1000"
        }
        try #require(holding, "the held request's first bytes never reached the server")

        let recording = ExchangeRecordingTransport(CurlTransport())
        var logger = Logger(label: "attach-busy-test")
        logger.logLevel = .critical
        let engine = SyncEngine(store: device.store, transport: recording, configuration: device.configuration, logger: logger)
        let sync = Task { try await engine.sync() }
        let refused = await eventually(timeout: 60) { recording.exchanges.contains { $0.method == "PUT" && $0.status == 409 } }
        held.close()
        _ = try await sync.value
        #expect(refused, "the device never met the held upload")
        #expect(try await device.store.blob(reference.sha256)?.upload == .done)
        let exchanges = recording.exchanges
        for (index, exchange) in exchanges.enumerated() where exchange.method == "PUT" && exchange.status == 409 && index + 1 < exchanges.count {
            #expect(exchanges[index + 1].method == "HEAD", "after a busy answer the device sent \(exchanges[index + 1].method), not HEAD: \(exchanges.map { "\($0.method) \($0.status.map(String.init) ?? "cut")" })")
        }
        // The server holds the whole photo, checked against its hash.
        let head = try await probe.send(TransportRequest(method: "HEAD", url: url.absoluteString, headers: ["Authorization": "Bearer \(collector)"]))
        #expect(head.headers["attachment-complete"] == "true")
    }

    @Test func aRecordSyncsBeforeItsPhotoAndShowsAsWaitingForIt() async throws {
        let fixture = try await SyncFixture(forms: [SampleForms.damageReport()])
        let collector = try await fixture.user("alice")
        let reviewer = try await fixture.user("rita", role: "reviewer")
        let device = try fixture.device(token: collector)
        try await device.sync()
        let (_, session, reference) = try await Self.submitDamageReport(on: device, photo: "a.jpg", size: 100_000, seed: 7)
        // The upload keeps failing (the server is told the wrong size): the record still reaches the server.
        try await device.store.noteTransferFailed(
            BlobTransfer(sha256: reference.sha256, bytes: 100_000, type: "image/jpeg", failures: 0),
            message: "test: held back", retryAt: Date().addingTimeInterval(3600))
        try await device.sync()
        #expect(try await device.store.outboxCount() == 0)
        let office = try fixture.device(token: reviewer)
        try await office.sync()
        #expect(try await office.store.record(session.recordID)?.missingOnServer.count == 1)
        #expect(try await office.store.syncStatus().recordsWaitingForAttachments == 1)
    }
}

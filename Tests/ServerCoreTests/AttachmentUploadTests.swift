import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import Testing

/// Resumable, verified uploads over a real socket, on every backend.
struct AttachmentUploadTests {
    static let seed = UInt64(ProcessInfo.processInfo.environment["FIELDSHEET_TEST_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)

    init() { print("AttachmentUploadTests seed \(Self.seed) (FIELDSHEET_TEST_SEED to repeat)") }

    @Test(arguments: Backend.available)
    func anUploadInPiecesResumesFromTheOffsetAndCompletesOnce(backend: Backend) async throws {
        // Over two PostgreSQL chunks, and not a multiple of one.
        let blob = TestBlob(count: 2 * 1024 * 1024 + 12_345, seed: Self.seed)
        try await TestServer.with(backend) { server in
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                let fresh = try await device.headAttachment(client, blob.sha256)
                #expect(fresh.status == .ok)
                #expect(fresh.uploadOffset == 0)
                #expect(fresh.attachmentComplete == "false")
                #expect(fresh.uploadLength == nil)

                let half = blob.bytes.count / 2
                let first = try await device.putAttachment(client, blob.sha256, blob.bytes, to: half)
                #expect(first.status == .noContent)
                #expect(first.uploadOffset == Int64(half))
                let between = try await device.headAttachment(client, blob.sha256)
                #expect(between.uploadOffset == Int64(half))
                #expect(between.uploadLength == Int64(blob.bytes.count))
                #expect(between.attachmentComplete == "false")

                let again = try await device.putAttachment(client, blob.sha256, blob.bytes, from: 0, to: 100)
                #expect(again.status == .conflict)
                #expect(again.problem?.type == "https://fieldsheet.dev/problems/upload-offset-mismatch")
                #expect(again.uploadOffset == Int64(half))

                let rest = try await device.putAttachment(client, blob.sha256, blob.bytes, from: half)
                #expect(rest.status == .created, "\(rest.text)")
                #expect(rest.uploadOffset == Int64(blob.bytes.count))
                let done = try await device.headAttachment(client, blob.sha256)
                #expect(done.attachmentComplete == "true")
                #expect(done.uploadOffset == Int64(blob.bytes.count))
                let repeated = try await device.putAttachment(client, blob.sha256, blob.bytes)
                #expect(repeated.status == .ok)
                #expect(repeated.attachmentComplete == "true")
                let key = AttachmentKey(projectID: try await server.project("alpha").id, sha256: blob.sha256)
                #expect(try await server.storage.isAttachmentStored(key))
                let stored = try #require(try await server.storage.attachments.read(key, range: nil))
                var copy = Data()
                for try await piece in stored.pieces { copy.append(piece) }
                #expect(copy == blob.bytes)
            }
        }
    }

    @Test(arguments: Backend.available)
    func aCorruptedUploadIsRefusedAndNothingIsKept(backend: Backend) async throws {
        let blob = TestBlob(count: 300_000, seed: Self.seed)
        var flipped = blob.bytes
        flipped[123_456] ^= 0x01
        let corrupted = flipped
        try await TestServer.with(backend) { server in
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                let refused = try await device.putAttachment(client, blob.sha256, corrupted)
                #expect(refused.status == .unprocessableContent)
                #expect(refused.problem?.type == "https://fieldsheet.dev/problems/attachment-hash-mismatch")
                #expect(refused.uploadOffset == 0)
                let after = try await device.headAttachment(client, blob.sha256)
                #expect(after.uploadOffset == 0)
                #expect(after.uploadLength == nil, "the partial upload is gone")
                #expect(after.attachmentComplete == "false")
                #expect(try await storedUploads(server) == 0)
                let good = try await device.putAttachment(client, blob.sha256, blob.bytes)
                #expect(good.status == .created)
            }
        }
    }

    /// The same member's second device sends nothing; another member sends the bytes (a hash proves nothing),
    /// which are checked and not stored twice.
    @Test(arguments: Backend.available)
    func theSameBytesFromTwoDevicesAreStoredOnce(backend: Backend) async throws {
        let blob = TestBlob(count: 150_000, seed: Self.seed)
        try await TestServer.with(backend) { server in
            let token = try await server.member("ana", project: "alpha", role: .collector)
            let phone = Device(clientID: "d1", token: token)
            let tablet = Device(clientID: "d3", token: token)
            let ben = Device(clientID: "d2", token: try await server.member("ben", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                #expect(try await phone.putAttachment(client, blob.sha256, blob.bytes).status == .created)
                let seen = try await tablet.headAttachment(client, blob.sha256)
                #expect(seen.attachmentComplete == "true", "the member's second device sends nothing")
                let sent = try await tablet.putAttachment(client, blob.sha256, blob.bytes)
                #expect(sent.status == .ok)
                let other = try await ben.headAttachment(client, blob.sha256)
                #expect(other.attachmentComplete == "false", "another member learns nothing from the hash")
                #expect(other.uploadOffset == 0)
                #expect(try await ben.putAttachment(client, blob.sha256, blob.bytes).status == .created)
                #expect(try await ben.headAttachment(client, blob.sha256).attachmentComplete == "true")
                #expect(try await storedUploads(server) == 1)
            }
        }
    }

    @Test(arguments: Backend.available)
    func malformedAndOversizedUploadsAreRefusedClearly(backend: Backend) async throws {
        let blob = TestBlob(count: 1_000, seed: Self.seed)
        var limits = ServerLimits()
        limits.maxAttachmentBytes = 999
        try await TestServer.with(backend, limits: limits) { server in
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                let large = try await device.putAttachment(client, blob.sha256, blob.bytes)
                #expect(large.status == .contentTooLarge)
                #expect(large.problem?.type == "https://fieldsheet.dev/problems/attachment-too-large")
                #expect(large.problem?.detail.contains("999") == true)
                #expect(large.uploadOffset == 0, "every upload answer says where the upload stands")
                let noRange = try await device.putAttachment(client, blob.sha256, blob.bytes, to: 10, contentRange: "")
                #expect(noRange.status == .badRequest)
                for bad in ["bytes 5-1/10", "bytes 0-10/10", "items 0-9/10", "bytes 0-9", "bytes -1-9/10"] {
                    let response = try await device.putAttachment(client, blob.sha256, blob.bytes, to: 10, contentRange: bad)
                    #expect(response.status == .badRequest, "\(bad)")
                    #expect(response.problem?.field == "Content-Range")
                }
                let short = try await device.putAttachment(client, blob.sha256, blob.bytes, to: 10, contentRange: "bytes 0-19/20")
                #expect(short.status == .badRequest, "Content-Length disagrees with the range")
                for name in ["ABCDEF" + blob.sha256.dropFirst(6), String(blob.sha256.dropLast()), "not-a-hash"] {
                    #expect(try await device.headAttachment(client, String(name)).status == .notFound)
                }
                let foreign = Device(clientID: "d1", token: device.token, project: "beta")
                #expect(try await foreign.headAttachment(client, blob.sha256).status == .notFound, "not a member of beta")
            }
        }
    }

    /// The server stopped after the last byte was stored but before the check: the next HEAD verifies it, so a
    /// client is never left holding an upload it cannot finish.
    @Test(arguments: Backend.available)
    func anUploadWithEveryByteInButNeverCheckedIsVerifiedByTheNextHead(backend: Backend) async throws {
        let blob = TestBlob(count: 1024 * 1024 + 5, seed: Self.seed)
        try await TestServer.with(backend) { server in
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            let key = AttachmentKey(projectID: try await server.project("alpha").id, sha256: blob.sha256)
            let upload = try await server.storage.attachments.beginUpload(key, uploader: try await server.userID(token: device.token), offset: 0, total: Int64(blob.bytes.count), length: Int64(blob.bytes.count))
            try await upload.append(blob.bytes)
            try await upload.suspend()
            try await server.app.test(.live) { client in
                let head = try await device.headAttachment(client, blob.sha256)
                #expect(head.attachmentComplete == "true")
                #expect(head.uploadOffset == Int64(blob.bytes.count))
                #expect(try await server.storage.isAttachmentStored(key))
            }
        }
    }

    /// How many uploads (partial or complete) the storage holds.
    func storedUploads(_ server: TestServer) async throws -> Int {
        switch server.location {
        case .sqlite(let directory):
            let root = directory + "/attachments"
            let projects = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
            return try projects.reduce(0) { $0 + (try FileManager.default.contentsOfDirectory(atPath: root + "/" + $1)).count }
        case .postgres(let database):
            return Int(try await TestDatabase.text(database, "SELECT count(*)::text FROM attachment_uploads")) ?? -1
        }
    }
}
import FormModel
import Foundation
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// Garbage collection of attachments (``AttachmentCollectionPolicy``) on every backend: what a record's value
/// or the conflict log references stays, the rest goes after its grace period, and removal is safe beside
/// uploads, downloads and other sweeps. Time moves by the sweep's `now`, never by sleeping.
struct AttachmentCollectionTests {
    static let seed = UInt64(ProcessInfo.processInfo.environment["FIELDSHEET_TEST_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)

    init() { print("AttachmentCollectionTests seed \(Self.seed) (FIELDSHEET_TEST_SEED to repeat)") }

    static let day: TimeInterval = 24 * 3600
    static let policy = AttachmentCollectionPolicy()

    static func sweep(_ server: TestServer, after interval: TimeInterval, policy: AttachmentCollectionPolicy = policy, dryRun: Bool = false) async throws -> AttachmentSweep {
        try await AttachmentCollector(
            storage: server.storage, schedule: AttachmentCollectionSchedule(interval: nil, policy: policy), logger: TestServer.quietLogger
        ).sweep(now: Date().addingTimeInterval(interval), dryRun: dryRun)
    }

    static func removed(_ sweep: AttachmentSweep, _ reason: CollectedAttachment.Reason) -> Set<String> {
        Set(sweep.collected.filter { $0.reason == reason }.map(\.key.sha256))
    }

    static func isComplete(_ device: Device, _ client: some TestClientProtocol, _ blob: TestBlob) async throws -> Bool {
        try await device.headAttachment(client, blob.sha256).attachmentComplete == "true"
    }

    @Test(arguments: Backend.available)
    func unreferencedAttachmentsGoAfterTheirGracePeriodAndReferencedOnesStay(backend: Backend) async throws {
        let kept = TestBlob(count: 40_000, seed: Self.seed)
        let orphan = TestBlob(count: 30_000, seed: Self.seed &+ 1)
        let dropped = TestBlob(count: 20_000, seed: Self.seed &+ 2)
        let draft = TestBlob(count: 10_000, seed: Self.seed &+ 3)
        try await TestServer.with(backend) { server in
            try await server.publish(AttachmentAccessTests.form, project: "alpha")
            let ana = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                let (first, second, third) = (UUID(), UUID(), UUID())
                let (pushed, _) = try await ana.push(client, [
                    ana.mutation(first, form: "inspection", ["photo": ana.change(AttachmentAccessTests.reference(kept))]),
                    ana.mutation(second, form: "inspection", ["photo": ana.change(AttachmentAccessTests.reference(dropped))]),
                    ana.mutation(third, state: .draft, form: "inspection", ["sketch": ana.change(AttachmentAccessTests.reference(draft))]),
                ])
                #expect(pushed.status == .ok)
                for blob in [kept, orphan, dropped, draft] {
                    #expect(try await ana.putAttachment(client, blob.sha256, blob.bytes).status == .created)
                }

                // Young: nothing goes, whatever references it.
                let young = try await Self.sweep(server, after: 0)
                #expect(young.collected.isEmpty)
                #expect(young.waiting == 1, "the orphan waits out its grace period")
                #expect(young.waitingBytes == Int64(orphan.bytes.count))

                // The record is edited to drop its photo: the photo's clock starts now.
                _ = try await ana.push(client, [ana.mutation(second, form: "inspection", ["photo": ana.change(nil, base: 1, millis: 2_000)])])
                let soon = try await Self.sweep(server, after: Self.day / 2)
                #expect(soon.collected.isEmpty, "nothing is a day old: \(soon.collected)")
                let dry = try await Self.sweep(server, after: Self.day + 3600, dryRun: true)
                #expect(Self.removed(dry, .unreferenced) == [orphan.sha256], "a dry run says what would go and changes nothing")
                #expect(try await Self.isComplete(ana, client, orphan))

                let later = try await Self.sweep(server, after: Self.day + 3600)
                #expect(Self.removed(later, .unreferenced) == [orphan.sha256], "the dropped photo was found unreferenced less than a day ago")
                #expect(later.bytes(.unreferenced) == Int64(orphan.bytes.count))
                let next = try await Self.sweep(server, after: 2 * Self.day)
                #expect(Self.removed(next, .unreferenced) == [dropped.sha256])

                for blob in [orphan, dropped] {
                    let head = try await ana.headAttachment(client, blob.sha256)
                    #expect(head.attachmentComplete == "false")
                    #expect(head.uploadOffset == 0)
                    let key = AttachmentKey(projectID: try await server.project("alpha").id, sha256: blob.sha256)
                    #expect(try await !server.storage.isAttachmentStored(key))
                }
                for blob in [kept, draft] {
                    #expect(try await Self.isComplete(ana, client, blob), "a current value keeps it (drafts too)")
                    #expect(try await ana.getAttachment(client, blob.sha256).status == .ok)
                }
                #expect(try await Self.sweep(server, after: 30 * Self.day).collected.isEmpty, "a second sweep finds nothing more")

                // A record that references a removed attachment again waits for it, and its upload is taken anew.
                _ = try await ana.push(client, [ana.mutation(second, form: "inspection", ["photo": ana.change(AttachmentAccessTests.reference(dropped), base: 2, millis: 3_000)])])
                let waiting = try await AttachmentAccessTests.pulledMissing(ana, client)
                #expect(waiting.missing[second] == [dropped.sha256])
                #expect(try await ana.putAttachment(client, dropped.sha256, dropped.bytes).status == .created)
                #expect(try await AttachmentAccessTests.pulledMissing(ana, client).missing[second] == [])
            }
        }
    }

    /// The value a conflict lost stays in the log, and its attachment with it; a value only the history
    /// remembers keeps no bytes.
    @Test(arguments: Backend.available)
    func theConflictLogKeepsTheAttachmentsOfTheValuesItHolds(backend: Backend) async throws {
        let first = TestBlob(count: 11_000, seed: Self.seed &+ 3)
        let winner = TestBlob(count: 12_000, seed: Self.seed)
        let loser = TestBlob(count: 13_000, seed: Self.seed &+ 1)
        let latest = TestBlob(count: 14_000, seed: Self.seed &+ 2)
        try await TestServer.with(backend) { server in
            try await server.publish(AttachmentAccessTests.form, project: "alpha")
            let token = try await server.member("ana", project: "alpha", role: .collector)
            let phone = Device(clientID: "phone", token: token)
            let tablet = Device(clientID: "tablet", token: token)
            try await server.app.test(.live) { client in
                let record = UUID()
                let now = HybridLogicalClock.wallMillis()
                _ = try await phone.push(client, [phone.mutation(record, form: "inspection", ["photo": phone.change(AttachmentAccessTests.reference(first), millis: 2_000, now: now)])])
                // Replaced before anyone else wrote: only the history remembers the first photo.
                _ = try await phone.push(client, [phone.mutation(record, form: "inspection", ["photo": phone.change(AttachmentAccessTests.reference(winner), base: 1, millis: 5_000, now: now)])])
                // The tablet's older photo, based on nothing, loses by its clock: the log keeps both sides.
                let (_, lost) = try await tablet.push(client, [tablet.mutation(record, form: "inspection", ["photo": tablet.change(AttachmentAccessTests.reference(loser), millis: 1_000, now: now)])])
                #expect(lost?.outcomes.first?.conflicts.count == 1)
                for blob in [first, winner, loser, latest] {
                    #expect(try await phone.putAttachment(client, blob.sha256, blob.bytes).status == .created)
                }
                // A later photo replaces the winner, which the log still holds (as the server's side).
                _ = try await phone.push(client, [phone.mutation(record, form: "inspection", ["photo": phone.change(AttachmentAccessTests.reference(latest), base: 2, millis: 9_000, now: now)])])
                let projectID = try await server.project("alpha").id
                let history = try await server.storage.history(projectID: projectID, recordID: record)
                #expect(history.contains { $0.detail.fields["photo"]?.from == AttachmentAccessTests.reference(first) })

                _ = try await Self.sweep(server, after: 0)
                let swept = try await Self.sweep(server, after: 2 * Self.day)
                #expect(Self.removed(swept, .unreferenced) == [first.sha256])
                #expect(try await Self.isComplete(phone, client, loser), "the conflict log keeps the losing photo")
                #expect(try await Self.isComplete(phone, client, winner), "and the one it lost to")
                #expect(try await Self.isComplete(phone, client, latest))
                #expect(try await !Self.isComplete(phone, client, first))
                // The history still shows the reference (name, size) it recorded.
                let after = try await server.storage.history(projectID: projectID, recordID: record)
                #expect(after == history)
            }
        }
    }

    @Test(arguments: Backend.available)
    func abandonedUploadsGoAfterTheirGracePeriodAndActiveOnesStay(backend: Backend) async throws {
        let stalled = TestBlob(count: 300_007, seed: Self.seed)
        let fresh = TestBlob(count: 50_000, seed: Self.seed &+ 1)
        try await TestServer.with(backend) { server in
            let ana = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                let half = 200_000
                #expect(try await ana.putAttachment(client, stalled.sha256, stalled.bytes, to: half).status == .noContent)
                #expect(try await ana.putAttachment(client, fresh.sha256, fresh.bytes, to: 10_000).status == .noContent)

                #expect(try await Self.sweep(server, after: 6 * Self.day).collected.isEmpty, "appended to within the week")
                let dry = try await Self.sweep(server, after: 8 * Self.day, dryRun: true)
                #expect(Self.removed(dry, .abandonedUpload) == [stalled.sha256, fresh.sha256])
                #expect(try await ana.headAttachment(client, stalled.sha256).uploadOffset == Int64(half))

                let later = try await Self.sweep(server, after: 8 * Self.day)
                #expect(Self.removed(later, .abandonedUpload) == [stalled.sha256, fresh.sha256])
                #expect(later.bytes(.abandonedUpload) == Int64(half + 10_000))

                // The device asks, is told to start again, and completes.
                let head = try await ana.headAttachment(client, stalled.sha256)
                #expect(head.uploadOffset == 0)
                #expect(head.uploadLength == nil)
                let continued = try await ana.putAttachment(client, stalled.sha256, stalled.bytes, from: half)
                #expect(continued.status == .conflict)
                #expect(continued.uploadOffset == 0)
                #expect(try await ana.putAttachment(client, stalled.sha256, stalled.bytes).status == .created)
            }
        }
    }

    /// An upload in progress when its partial upload is removed fails cleanly and starts again; a download
    /// in progress reads every byte.
    @Test(arguments: Backend.available)
    func removalIsSafeBesideAnUploadAndADownloadInProgress(backend: Backend) async throws {
        let uploading = TestBlob(count: 2 * 1024 * 1024 + 99, seed: Self.seed)
        let reading = TestBlob(count: 3 * 1024 * 1024 + 5, seed: Self.seed &+ 1)
        try await TestServer.with(backend) { server in
            let projectID = try await server.project("alpha").id
            let store = server.storage.attachments
            let upKey = AttachmentKey(projectID: projectID, sha256: uploading.sha256)
            let upload = try await store.beginUpload(upKey, uploader: 1, offset: 0, total: Int64(uploading.bytes.count), length: Int64(uploading.bytes.count))
            try await upload.append(uploading.bytes.prefix(1024 * 1024 + 10))

            let readKey = AttachmentKey(projectID: projectID, sha256: reading.sha256)
            let whole = try await store.beginUpload(readKey, uploader: 1, offset: 0, total: Int64(reading.bytes.count), length: Int64(reading.bytes.count))
            try await whole.append(reading.bytes)
            try await whole.complete()
            let bytes = try #require(try await store.read(readKey, range: nil))
            var iterator = bytes.pieces.makeAsyncIterator()
            var copy = try #require(try await iterator.next())

            let now = AttachmentCollectionPolicy(unreferencedAge: 0, abandonedUploadAge: 0)
            let swept = try await Self.sweep(server, after: 1, policy: now)
            switch backend {
            case .sqlite:
                // The upload holds its file's lock; the download's open file outlives its name.
                #expect(Self.removed(swept, .abandonedUpload).isEmpty)
                #expect(Self.removed(swept, .unreferenced) == [reading.sha256])
            case .postgres:
                // The download's lease keeps the chunks; the upload's row goes (the upload learns it below).
                #expect(Self.removed(swept, .unreferenced).isEmpty)
                #expect(Self.removed(swept, .abandonedUpload) == [uploading.sha256])
            }
            while let piece = try await iterator.next() { copy.append(piece) }
            #expect(copy == reading.bytes, "the download read every byte")

            var failed = false
            do {
                try await upload.append(uploading.bytes.dropFirst(1024 * 1024 + 10))
                try await upload.complete()
            } catch AttachmentError.offsetMismatch(let received) {
                failed = true
                #expect(received == 0)
                try? await upload.suspend()
            }
            #expect(failed == (backend == .postgres), "on files the upload held its partial file and completed")
            if failed {
                let again = try await store.beginUpload(upKey, uploader: 1, offset: 0, total: Int64(uploading.bytes.count), length: Int64(uploading.bytes.count))
                try await again.append(uploading.bytes)
                try await again.complete()
            }
            #expect(try await store.stored(upKey) == Int64(uploading.bytes.count))
        }
    }

    /// Several instances sweeping at once remove each attachment once and fail nowhere.
    @Test(arguments: Backend.available)
    func sweepsAtTheSameTimeRemoveEachAttachmentOnce(backend: Backend) async throws {
        let blobs = (0..<12).map { TestBlob(count: 5_000 + $0, seed: Self.seed &+ UInt64($0)) }
        try await TestServer.with(backend) { server in
            let ana = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                for blob in blobs {
                    let response = try await ana.putAttachment(client, blob.sha256, blob.bytes)
                    #expect(response.status == .created)
                }
            }
            let policy = AttachmentCollectionPolicy(unreferencedAge: 0, abandonedUploadAge: 0)
            async let first = Self.sweep(server, after: 1, policy: policy)
            async let second = Self.sweep(server, after: 1, policy: policy)
            async let third = Self.sweep(server, after: 1, policy: policy)
            let all = try await [first, second, third].flatMap(\.collected)
            #expect(all.count == blobs.count)
            #expect(Set(all.map(\.key.sha256)) == Set(blobs.map(\.sha256)))
        }
    }
}

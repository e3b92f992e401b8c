import Foundation
import FieldSheetTesting
import FormModel
import GRDB
import Testing
@testable import DraftStore

/// `FormSession.attach` and `detach`: durable before they return, refused cleanly, and taken back by Cancel
/// like any edit of the presentation, files included.
struct AttachmentSessionTests {
    struct Setup {
        let directory = TemporaryDirectory("attach")
        let store: DraftStore

        init(maxPhotoBytes: Int64 = 50 << 20) async throws {
            store = try DraftStore(home: directory.url)
            try await store.importForms([SampleForms.damageReport(maxPhotoBytes: maxPhotoBytes)])
        }

        /// A stand-in file of `size` random bytes drawn from `seed`.
        func file(_ name: String, size: Int, seed: UInt64) -> String {
            let path = directory.file(name)
            SampleForms.writeRandomFile(path, size: size, seed: seed)
            return path
        }

        var blobFiles: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.file("attachments"))) ?? []).sorted()
        }
    }

    @Test func anAttachedPhotoIsPartOfTheRecordAndItsBytesAreOnDiskBeforeAttachReturns() async throws {
        let setup = try await Setup()
        let path = setup.file("IMG_0042.jpg", size: 48_213, seed: 42)
        print("seed 42")
        let session = try await setup.store.newRecord(formID: "damage-report")
        let issues = try await session.attach("photo", file: path)
        #expect(issues.isEmpty)
        let reference = try #require(await session.attachments["photo"])
        #expect(reference.name == "IMG_0042.jpg" && reference.type == "image/jpeg" && reference.bytes == 48_213)
        #expect(reference.sha256 == (try BlobDirectory.hash(ofFile: path)).sha256)
        #expect(reference.display == "IMG_0042.jpg (image/jpeg, 47 KB)")
        // Another process opening the home now finds the answer and the file: both were committed.
        let other = try DraftStore(home: setup.directory.url)
        #expect(try await other.record(session.recordID)?.answers["photo"] == .attachment(reference))
        #expect(other.attachmentFile(reference.sha256) != nil)
        #expect(try other.attachmentData(reference.sha256) == Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(try await other.waitingUploads() == WaitingUploads(count: 1, bytes: 48_213))
        #expect(try await other.outboxCount(record: session.recordID) >= 2)
        try await session.set("site", to: .text("Depot"))
        #expect(try await session.complete() == .submitted)
    }

    @Test func aRepeatInstanceTakesItsOwnPhotoByAddress() async throws {
        let setup = try await Setup()
        let first = setup.file("crack.jpg", size: 1000, seed: 1)
        let second = setup.file("rust.png", size: 2000, seed: 2)
        let session = try await setup.store.newRecord(formID: "damage-report")
        let results = try await session.set(
            addressed: [("site", "Depot"), ("defects[1].note", "Crack"), ("defects[2].note", "Rust")],
            attaching: [("defects[1].defect_photo", first), ("defects[2].defect_photo", second), ("photo", first)])
        #expect(results.allSatisfy { $0.issues.isEmpty })
        let state = await session.state
        let defects = state.instances.live("defects", in: "")
        #expect(defects.count == 2)
        let attachments = await session.attachments
        #expect(attachments[defects[0].prefix + "/defect_photo"]?.name == "crack.jpg")
        #expect(attachments[defects[1].prefix + "/defect_photo"]?.type == "image/png")
        #expect(attachments["photo"]?.sha256 == attachments[defects[0].prefix + "/defect_photo"]?.sha256)
        #expect(setup.blobFiles.count == 2)  // crack.jpg once, though attached twice
        #expect(try await session.complete() == .submitted)
    }

    @Test func aFileTheFieldWouldNotTakeIsRefusedBeforeAnythingIsCopied() async throws {
        let setup = try await Setup(maxPhotoBytes: 1000)
        let big = setup.file("big.jpg", size: 5000, seed: 3)
        let text = setup.file("notes.txt", size: 10, seed: 4)
        let session = try await setup.store.newRecord(formID: "damage-report")
        let tooLarge = await #expect(throws: DraftStoreError.self) { try await session.attach("photo", file: big) }
        #expect(tooLarge?.code == .attachmentRefused)
        #expect(tooLarge?.message.contains("at most 1000 bytes") == true)
        let wrongType = await #expect(throws: DraftStoreError.self) { try await session.attach("photo", file: text) }
        #expect(wrongType?.code == .attachmentRefused)
        #expect(wrongType?.message.contains("text/plain") == true)
        let notAFileField = await #expect(throws: DraftStoreError.self) { try await session.attach("site", file: text) }
        #expect(notAFileField?.code == .wrongType)
        #expect(notAFileField?.message.contains("photo, voice, document") == true)
        let missing = await #expect(throws: DraftStoreError.self) { try await session.attach("document", file: setup.directory.file("nope.pdf")) }
        #expect(missing?.code == .attachmentUnreadable)
        // Any file goes into a file field.
        #expect(try await session.attach("document", file: text).isEmpty)
        #expect(setup.blobFiles.count == 1)
        #expect(await session.attachments.keys.sorted() == ["document"])
    }

    @Test func cancelDiscardsOnlyWhatThisPresentationAttached() async throws {
        let setup = try await Setup()
        let original = setup.file("before.jpg", size: 3000, seed: 10)
        let first = try await setup.store.newRecord(formID: "damage-report")
        try await first.set("site", to: .text("Depot"))
        try await first.attach("photo", file: original)
        try await first.dismiss(reason: .escape)
        let kept = try #require(await first.attachments["photo"])
        // A second sheet replaces the photo and adds a voice note, then Cancel → Discard.
        let second = try await setup.store.resumeDraft(first.recordID)
        try await second.attach("photo", file: setup.file("after.jpg", size: 4000, seed: 11))
        try await second.attach("voice", file: setup.file("note.m4a", size: 500, seed: 12))
        #expect(setup.blobFiles.count == 3)
        guard case .needsConfirmation = try await second.cancel() else {
            Issue.record("Cancel after attaching must ask for confirmation")
            return
        }
        #expect(try await second.discardChanges() == .reverted(fields: ["photo", "voice"]))
        let answers = try #require(try await setup.store.record(first.recordID)).answers
        #expect(answers["photo"] == .attachment(kept))
        #expect(answers["voice"] == nil)
        #expect(setup.blobFiles == [kept.sha256])
        #expect(try await setup.store.waitingUploads().count == 1)
    }

    @Test func discardingANewRecordRemovesTheFilesItAttached() async throws {
        let setup = try await Setup()
        let session = try await setup.store.newRecord(formID: "damage-report")
        try await session.attach("photo", file: setup.file("a.jpg", size: 700, seed: 20))
        #expect(setup.blobFiles.count == 1)
        #expect(try await session.discardChanges() == .removedNewRecord)
        #expect(setup.blobFiles.isEmpty)
        #expect(try await setup.store.waitingUploads() == .none)
    }

    @Test func aDetachedFileStaysWhileCancelCouldBringItBackAndGoesAfter() async throws {
        let setup = try await Setup()
        let first = try await setup.store.newRecord(formID: "damage-report")
        try await first.attach("photo", file: setup.file("a.jpg", size: 900, seed: 30))
        try await first.dismiss(reason: .escape)
        let second = try await setup.store.resumeDraft(first.recordID)
        try await second.detach("photo")
        #expect(await second.attachments.isEmpty)
        #expect(try await setup.store.collectGarbage().removed.isEmpty)  // the sheet's Cancel could restore it
        #expect(setup.blobFiles.count == 1)
        try await second.dismiss(reason: .escape)
        #expect(try await setup.store.collectGarbage().removed.count == 1)
        #expect(setup.blobFiles.isEmpty)
        let wrong = await #expect(throws: DraftStoreError.self) {
            let third = try await setup.store.resumeDraft(first.recordID)
            defer { Task { try? await third.dismiss(reason: .escape) } }
            try await third.detach("site")
        }
        #expect(wrong?.code == .wrongType)
    }
}

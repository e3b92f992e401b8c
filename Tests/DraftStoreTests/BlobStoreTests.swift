import Foundation
import FieldSheetTesting
import GRDB
import Synchronization
import Testing
@testable import DraftStore

/// The attachments' bytes on the device: copied in durably under their hash, removed only when nothing
/// refers to them, and a full disk refuses cleanly.
struct BlobStoreTests {
    /// A file of `size` pseudo-random bytes (from `seed`) in the fixture's directory.
    static func file(_ fixture: Fixture, _ name: String, size: Int, seed: UInt64) -> String {
        var random = SplitMix64(seed: seed)
        var bytes = [UInt8](repeating: 0, count: size)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: random.next()) }
        let path = fixture.directory.file(name)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    /// Stores `path` as an attachment and refers to it from the record's unsent edits under `field`.
    static func attach(_ fixture: Fixture, _ path: String, record: UUID, field: String = "photo", presentation: String? = nil) async throws -> DraftStore.StoredBytes {
        let key = record.uuidString.lowercased()
        return try await fixture.store.storeAttachments(from: [(path, "image/jpeg")], presentation: presentation, doing: "attaching \(path)") { db, all in
            let stored = all[0]
            let answer = #"{"attachment":{"sha256":"\#(stored.sha256)","bytes":\#(stored.bytes),"type":"image/jpeg","name":"x.jpg"}}"#
            try DraftStore.setEdit(db, record: key, key: field, json: answer)
            return stored
        }
    }

    /// An attachment answer's JSON whose hash is `digit` 64 times.
    static func reference(_ digit: Character) -> String {
        #"{"attachment":{"sha256":"\#(String(repeating: digit, count: 64))","bytes":10,"type":"image/jpeg","name":"\#(digit).jpg"}}"#
    }

    static func clear(_ fixture: Fixture, record: UUID, field: String = "photo") async throws {
        try await fixture.store.pool.write { db in
            try db.execute(sql: "DELETE FROM record_edits WHERE record_id = ? AND key = ?", arguments: [record.uuidString.lowercased(), field])
        }
    }

    func blobNames(_ fixture: Fixture) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: fixture.directory.file("attachments"))) ?? []
        return names.sorted()
    }

    @Test func anAttachedFileIsStoredUnderItsHashWithTheSameBytesAndWaitsToUpload() async throws {
        let fixture = try await Fixture()
        let record = try await fixture.draft()
        let source = Self.file(fixture, "IMG_0042.jpg", size: 3_000_000, seed: 42)
        print("seed 42")
        let stored = try await Self.attach(fixture, source, record: record)
        let (expected, size) = try BlobDirectory.hash(ofFile: source)
        #expect(stored.sha256 == expected)
        #expect(stored.bytes == 3_000_000 && size == 3_000_000)
        #expect(fixture.store.attachmentFile(expected) != nil)
        #expect(try fixture.store.attachmentData(expected) == Data(contentsOf: URL(fileURLWithPath: source)))
        #expect(blobNames(fixture) == [expected])  // no temporary file left
        let blob = try #require(try await fixture.store.blob(expected))
        #expect(blob.isStored && blob.upload == .waiting && blob.transferred == 0)
        #expect(try await fixture.store.waitingUploads() == WaitingUploads(count: 1, bytes: 3_000_000))
        // A second process sees it: the row and the file are durable, not in a cache.
        let reopened = try fixture.reopen()
        #expect(try await reopened.blob(expected)?.isStored == true)
    }

    @Test func theSameBytesAttachedTwiceAreStoredOnce() async throws {
        let fixture = try await Fixture()
        let first = try await fixture.draft()
        let second = try await fixture.draft(site: "Roof")
        let source = Self.file(fixture, "a.jpg", size: 10_000, seed: 7)
        let copy = fixture.directory.file("b.jpg")
        try FileManager.default.copyItem(atPath: source, toPath: copy)
        let one = try await Self.attach(fixture, source, record: first)
        let two = try await Self.attach(fixture, copy, record: second)
        #expect(one.sha256 == two.sha256)
        #expect(blobNames(fixture) == [one.sha256])
        #expect(try await fixture.store.waitingUploads().count == 1)
    }

    @Test func aFullDiskRefusesTheAttachAndLeavesNothingBehind() async throws {
        let fixture = try await Fixture()
        let record = try await fixture.draft()
        let before = try #require(try await fixture.store.record(record))
        let source = Self.file(fixture, "big.jpg", size: 3 * BlobDirectory.chunkSize + 5, seed: 3)
        // The disk fills up after 2 MiB, wherever in the copy that falls.
        let written = Mutex(0)
        let full = BlobWriter { fd, bytes in
            let allowed = written.withLock { total -> Int in
                let room = max(0, 2 * BlobDirectory.chunkSize - total)
                total += min(room, bytes.count)
                return min(room, bytes.count)
            }
            if allowed == 0 {
                errno = ENOSPC
                return -1
            }
            return write(fd, bytes.baseAddress, allowed)
        }
        let error = await #expect(throws: DraftStoreError.self) {
            try await fixture.store.storeAttachments(from: [(source, "image/jpeg")], presentation: nil, doing: "attaching big.jpg", writer: full) { _, stored in stored[0].sha256 }
        }
        #expect(error?.code == .storageFull)
        #expect(error?.message.contains("full") == true)
        #expect(blobNames(fixture).isEmpty)
        #expect(try await fixture.store.waitingUploads() == .none)
        #expect(try await fixture.store.record(record) == before)
    }

    @Test func aMissingOrUnreadableSourceIsAClearError() async throws {
        let fixture = try await Fixture()
        let missing = await #expect(throws: DraftStoreError.self) {
            try await fixture.store.storeAttachments(from: [("/nonexistent/photo.jpg", "image/jpeg")], presentation: nil, doing: "attaching photo.jpg") { _, _ in () }
        }
        #expect(missing?.code == .attachmentUnreadable)
        #expect(missing?.message.contains("/nonexistent/photo.jpg") == true)
        let directory = await #expect(throws: DraftStoreError.self) {
            try await fixture.store.storeAttachments(from: [(fixture.directory.path, "image/jpeg")], presentation: nil, doing: "attaching a folder") { _, _ in () }
        }
        #expect(directory?.code == .attachmentUnreadable)
        #expect(directory?.message.contains("not a regular file") == true)
        #expect(blobNames(fixture).isEmpty)
    }

    @Test func aFailedTransactionRemovesTheFileItPlaced() async throws {
        let fixture = try await Fixture()
        let source = Self.file(fixture, "a.jpg", size: 1000, seed: 11)
        struct Refused: Error {}
        await #expect(throws: DraftStoreError.self) {
            try await fixture.store.storeAttachments(from: [(source, "image/jpeg")], presentation: nil, doing: "attaching a.jpg") { _, _ in throw Refused() }
        }
        #expect(blobNames(fixture).isEmpty)
        #expect(try await fixture.store.waitingUploads() == .none)
    }

    /// Opening a record asks for the attachments it refers to that are not here: in its synced values, its
    /// unsent edits (a conflict settled with the server's photo) and its conflicts; nothing for one that has none.
    /// In an encrypted store and in clear; opening the record asks for the same ones, found in the fields and
    /// unsent edits it reads anyway.
    @Test(arguments: [true, false])
    func openingARecordAsksForTheAttachmentsItRefersToThatAreNotHere(encrypted: Bool) async throws {
        let fixture = try await Fixture(options: .init(encryption: encrypted ? .keyFileInHome : .none))
        #expect(fixture.store.isEncrypted == encrypted)
        let plain = try await fixture.draft(site: "No photo")
        #expect(try await fixture.store.requestDownloads(record: plain) == 0)

        let record = try await fixture.draft(site: "Photos")
        let key = record.uuidString.lowercased()
        let (synced, edited, conflicting) = (Self.reference("a"), Self.reference("b"), Self.reference("c"))
        let here = try await Self.attach(fixture, Self.file(fixture, "here.jpg", size: 100, seed: 7), record: record, field: "here")
        try await fixture.store.pool.write { db in
            try db.execute(sql: "UPDATE records SET fields = fs_seal_fields(json_object('values', json_object('synced', json(?1))), 'record', ?2) WHERE id = ?2", arguments: [synced, key])
            try DraftStore.setEdit(db, record: key, key: "edited", json: edited)
            try db.execute(sql: "INSERT INTO conflicts (record_id, field_id, policy, remote_value, detected_at) VALUES (?1, 'other', 'manual', fs_seal(?2, 'conflict', ?1, 'other', 'remote'), 0)", arguments: [key, conflicting])
        }
        #expect(try await fixture.store.requestDownloads(record: record) == 3, "the synced, the edited and the conflict's photo; not \(here.sha256), which is here")
        let wanted = try await fixture.store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT sha256 FROM blobs WHERE download = 'wanted' ORDER BY sha256")
        }
        #expect(wanted == ["a", "b", "c"].map { String(repeating: $0, count: 64) })

        try await fixture.store.pool.write { db in try db.execute(sql: "DELETE FROM blobs WHERE download = 'wanted'") }
        let opened = try await fixture.store.resumeDraft(record)
        try await opened.dismiss(reason: .escape)
        let wantedOnOpening = try await fixture.store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT sha256 FROM blobs WHERE download = 'wanted' ORDER BY sha256")
        }
        #expect(wantedOnOpening == wanted)
    }

    @Test func garbageCollectionRemovesOnlyWhatNothingRefersTo() async throws {
        let fixture = try await Fixture()
        let record = try await fixture.draft()
        let kept = try await Self.attach(fixture, Self.file(fixture, "kept.jpg", size: 2000, seed: 1), record: record, field: "photo")
        let dropped = try await Self.attach(fixture, Self.file(fixture, "dropped.jpg", size: 3000, seed: 2), record: record, field: "other")
        try await Self.clear(fixture, record: record, field: "other")
        let collection = try await fixture.store.collectGarbage()
        #expect(collection.removed == [dropped.sha256])
        #expect(collection.freedBytes == 3000)
        #expect(blobNames(fixture) == [kept.sha256])
        #expect(try await fixture.store.blob(dropped.sha256) == nil)
        // Synced fields refer too: moving the reference from the unsent edits to the synced fields keeps it.
        try await fixture.store.pool.write { db in
            try db.execute(sql: """
                UPDATE records SET fields = fs_seal_fields(json_set(fs_open_fields(fields, 'record', id), '$.values.photo',
                    json((SELECT fs_open(value, 'edit', record_id, key) FROM record_edits WHERE record_id = ?1 AND key = 'photo'))), 'record', id)
                WHERE id = ?1
                """, arguments: [record.uuidString.lowercased()])
            try DraftStore.clearEdits(db, record: record.uuidString.lowercased())
        }
        #expect(try await fixture.store.collectGarbage().removed.isEmpty)
        #expect(blobNames(fixture) == [kept.sha256])
    }

    @Test func garbageCollectionKeepsWhatAnOpenPresentationCouldStillNeed() async throws {
        let fixture = try await Fixture()
        let record = try await fixture.draft()
        let opened = try await Self.attach(fixture, Self.file(fixture, "opened.jpg", size: 2000, seed: 5), record: record)
        // A sheet opens on the record (its snapshot refers to the photo), then the photo is replaced.
        let presentation = UUID().uuidString.lowercased()
        try await fixture.store.pool.write { db in
            let key = record.uuidString.lowercased()
            try DraftStore.insertPresentation(db, presentation, record: key, kind: "resume", now: DraftStore.nowMillis(), stored: try DraftStore.fetchStoredAnswers(db, record: key))
        }
        let replaced = try await Self.attach(fixture, Self.file(fixture, "new.jpg", size: 2500, seed: 6), record: record, presentation: presentation)
        let transient = try await Self.attach(fixture, Self.file(fixture, "transient.jpg", size: 100, seed: 8), record: record, field: "scratch", presentation: presentation)
        try await Self.clear(fixture, record: record, field: "scratch")
        // Cancel could bring the first photo back; the presentation attached the transient one: all kept.
        #expect(try await fixture.store.collectGarbage().removed.isEmpty)
        #expect(blobNames(fixture) == [opened.sha256, replaced.sha256, transient.sha256].sorted())
        // Once the sheet is closed keeping the new photo, the old one and the transient one go.
        try await fixture.store.endPresentation(presentation)
        #expect(try await fixture.store.collectGarbage().removed == [opened.sha256, transient.sha256].sorted())
        #expect(blobNames(fixture) == [replaced.sha256])
    }

    @Test func garbageCollectionRemovesFilesWithNoRowAndStaleTemporaryFiles() async throws {
        let fixture = try await Fixture()
        let directory = fixture.directory.file("attachments")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let orphan = String(repeating: "ab", count: 32)
        _ = FileManager.default.createFile(atPath: directory + "/" + orphan, contents: Data("x".utf8))
        _ = FileManager.default.createFile(atPath: directory + "/" + orphan.reversed() + ".partial", contents: Data("y".utf8))
        let stale = directory + "/.incoming-stale"
        let fresh = directory + "/.incoming-fresh"
        _ = FileManager.default.createFile(atPath: stale, contents: Data("z".utf8))
        _ = FileManager.default.createFile(atPath: fresh, contents: Data("z".utf8))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: stale)
        let collection = try await fixture.store.collectGarbage()
        #expect(collection.removed == [orphan, String(orphan.reversed())].sorted())
        #expect(blobNames(fixture) == [".incoming-fresh"])  // an attach may still be writing it
    }
}

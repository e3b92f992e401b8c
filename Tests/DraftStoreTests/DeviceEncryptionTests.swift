import Foundation
import FieldSheetTesting
import FormModel
import GRDB
import Testing
@testable import DraftStore

/// The encrypted device store: the key providers, values sealed where they are stored (and refused where
/// moved), attachments in authenticated chunks, and a home written in clear encrypted in place, resumably.
struct DeviceEncryptionTests {
    /// Every file of `home` (database, its WAL and shared memory, attachments, anything else) that holds one
    /// of `markers`, with the marker found; the key file is left out (it holds no answer).
    static func filesHolding(_ markers: [String], in home: String) throws -> [String] {
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: home)
        while let name = enumerator?.nextObject() as? String {
            let path = (home as NSString).appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                name != DeviceKeyFile.defaultFileName else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for marker in markers where bytes.range(of: Data(marker.utf8)) != nil {
                found.append("\(name): \(marker)")
            }
        }
        return found
    }

    static func mode(_ path: String) -> mode_t {
        var status = stat()
        _ = stat(path, &status)
        return status.st_mode & 0o777
    }

    @Test func aNewHomeIsEncryptedWithAKeyFileOnlyItsOwnerCanRead() async throws {
        let fixture = try await Fixture()
        #expect(fixture.store.isEncrypted)
        let keyFile = fixture.directory.file(DeviceKeyFile.defaultFileName)
        #expect(Self.mode(keyFile) == 0o600)
        #expect((try Data(contentsOf: URL(fileURLWithPath: keyFile))).count == 32)
        let record = try await fixture.draft(site: "Marker-Site-7731", count: 2)
        // Another process with the same key file reads it as before.
        #expect(try await fixture.reopen().record(record)?.answers["site"] == .text("Marker-Site-7731"))
        #expect(try Self.filesHolding(["Marker-Site-7731"], in: fixture.directory.path) == [])
    }

    @Test func aKeyFileOthersCanReadIsRefusedAndSoIsAMissingOne() async throws {
        let fixture = try await Fixture()
        _ = try await fixture.draft()
        let keyFile = fixture.directory.file(DeviceKeyFile.defaultFileName)
        chmod(keyFile, 0o644)
        let exposed = #expect(throws: DraftStoreError.self) { try fixture.reopen() }
        #expect(exposed?.code == .deviceKeyUnusable)
        #expect(exposed?.message.contains("mode 644") == true && exposed?.message.contains("chmod 600") == true, "\(exposed?.message ?? "")")
        chmod(keyFile, 0o600)
        let moved = fixture.directory.file("device.key.moved")
        #expect(rename(keyFile, moved) == 0)
        let missing = #expect(throws: DraftStoreError.self) { try fixture.reopen() }
        #expect(missing?.code == .deviceKeyUnusable)
        #expect(missing?.message.contains("is missing") == true, "\(missing?.message ?? "")")
        // No new key was made in its place.
        #expect(!FileManager.default.fileExists(atPath: keyFile))
        let other = DeviceKeyFile(path: fixture.directory.file("other.key"))
        _ = try other.dataKey(for: DeviceKeyRequest(databasePath: "x", salt: [], mayCreate: true))
        let wrong = #expect(throws: DraftStoreError.self) {
            try DraftStore(home: fixture.directory.url, options: .init(encryption: .key(other)))
        }
        #expect(wrong?.code == .deviceKeyUnusable)
        #expect(wrong?.message.contains("does not open") == true, "\(wrong?.message ?? "")")
        let unencrypted = #expect(throws: DraftStoreError.self) {
            try DraftStore(home: fixture.directory.url, options: .init(encryption: .none))
        }
        #expect(unencrypted?.code == .deviceKeyUnusable)
        #expect(rename(moved, keyFile) == 0)
        #expect(try fixture.reopen().isEncrypted)
    }

    @Test func aPassphraseOpensItsStoreAndAWrongOneIsRefused() async throws {
        let directory = TemporaryDirectory("passphrase")
        let store = try DraftStore(home: directory.url, options: .init(encryption: .key(DevicePassphrase("correct horse", rounds: 1 << 10))))
        try await store.importForms([SampleForms.followUpJob()])
        let session = try await store.newRecord(formID: "follow-up-job")
        try await session.set("site", to: .text("Passphrase-Marker-9"))
        try await session.dismiss(reason: .escape)
        let wrong = #expect(throws: DraftStoreError.self) {
            try DraftStore(home: directory.url, options: .init(encryption: .key(DevicePassphrase("wrong horse", rounds: 1 << 10))))
        }
        #expect(wrong?.code == .deviceKeyUnusable)
        let again = try DraftStore(home: directory.url, options: .init(encryption: .key(DevicePassphrase("correct horse", rounds: 1 << 10))))
        #expect(try await again.record(session.recordID)?.answers["site"] == .text("Passphrase-Marker-9"))
        #expect(!FileManager.default.fileExists(atPath: directory.file(DeviceKeyFile.defaultFileName)))
        #expect(try Self.filesHolding(["Passphrase-Marker-9"], in: directory.path) == [])
    }

    @Test func aValueMovedToAnotherRecordOrFieldIsRefused() async throws {
        let fixture = try await Fixture()
        let first = try await fixture.draft(site: "First site", count: 1)
        let second = try await fixture.draft(site: "Second site", count: 2)
        // Stored values are sealed BLOBs; ids, keys and stamps are in clear.
        let kinds = try await fixture.store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT typeof(value) FROM record_edits WHERE value IS NOT NULL")
        }
        #expect(kinds == ["blob"])
        try await fixture.store.pool.write { db in
            try db.execute(sql: """
                UPDATE record_edits SET value = (SELECT value FROM record_edits WHERE record_id = ?1 AND key = 'site')
                WHERE record_id = ?2 AND key = 'site'
                """, arguments: [first.uuidString.lowercased(), second.uuidString.lowercased()])
        }
        let moved = await #expect(throws: DraftStoreError.self) { try await fixture.store.record(second) }
        #expect(moved?.code == .databaseDamaged)
        #expect(moved?.message.contains("altered or moved") == true, "\(moved?.message ?? "")")
        #expect(try await fixture.store.record(first)?.answers["site"] == .text("First site"))
    }

    /// Opening a draft opens its unsent edits: the answers (a cleared field too) are those saved, in an encrypted
    /// store and in clear; Discard brings back the snapshot made of them; an edit moved from another record, or
    /// put there in clear, is refused, not read.
    @Test(arguments: [true, false])
    func aDraftOpensFromItsStoredEditsAndRefusesOneMovedOrInClear(encrypted: Bool) async throws {
        let fixture = try await Fixture(options: .init(encryption: encrypted ? .keyFileInHome : .none))
        #expect(fixture.store.isEncrypted == encrypted)
        let first = try await fixture.draft(site: "First site", count: 1)
        let second = try await fixture.draft(site: "Second site \"quoted\" é", count: 2)
        let clearing = try await fixture.store.resumeDraft(first)
        _ = try await clearing.set("count", to: nil)
        try await clearing.dismiss(reason: .escape)

        let opened = try await fixture.store.resumeDraft(first)
        #expect(await opened.answers["site"] == .text("First site"))
        #expect(await opened.answers["count"] == nil)
        _ = try await opened.set("site", to: .text("Changed"))
        _ = try await opened.discardChanges()
        let again = try await fixture.store.resumeDraft(second)
        #expect(await again.answers["site"] == .text("Second site \"quoted\" é"))
        #expect(await again.answers["count"] == .integer(2))
        try await again.dismiss(reason: .escape)
        #expect(try await fixture.store.record(first)?.answers["site"] == .text("First site"))

        guard encrypted else { return }
        try await fixture.store.pool.write { db in
            try db.execute(sql: """
                UPDATE record_edits SET value = (SELECT value FROM record_edits WHERE record_id = ?1 AND key = 'site')
                WHERE record_id = ?2 AND key = 'site'
                """, arguments: [first.uuidString.lowercased(), second.uuidString.lowercased()])
        }
        let moved = await #expect(throws: DraftStoreError.self) { try await fixture.store.resumeDraft(second) }
        #expect(moved?.code == .databaseDamaged)
        #expect(moved?.message.contains("altered or moved") == true, "\(moved?.message ?? "")")
        try await fixture.store.pool.write { db in
            try db.execute(sql: #"UPDATE record_edits SET value = '{"text":"Planted"}' WHERE record_id = ? AND key = 'site'"#,
                           arguments: [first.uuidString.lowercased()])
        }
        let planted = await #expect(throws: DraftStoreError.self) { try await fixture.store.resumeDraft(first) }
        #expect(planted?.code == .databaseDamaged)
        #expect(planted?.message.contains("in clear") == true, "\(planted?.message ?? "")")
        #expect(try await fixture.presentationCount() == 0)
    }

    @Test func anAttachmentIsStoredInAuthenticatedChunksAndACutFileIsRefused() async throws {
        let directory = TemporaryDirectory("sealed-blob")
        let store = try DraftStore(home: directory.url)
        try await store.importForms([SampleForms.damageReport()])
        // Three and a bit chunks, with a marker in the last one.
        var text = String(repeating: "filler line of the report\n", count: 8_000)
        text += "Blob-Marker-4411\n"
        let source = directory.write("report.txt", text)
        let session = try await store.newRecord(formID: "damage-report")
        try await session.attach("document", file: source)
        let reference = try #require(await session.attachments["document"])
        try await session.dismiss(reason: .escape)
        #expect(try store.attachmentData(reference.sha256) == Data(text.utf8))
        #expect(try Self.filesHolding(["Blob-Marker-4411", "filler line"], in: directory.file("attachments")) == [])
        // Ranges across chunk boundaries, as an upload reads them.
        let whole = Data(text.utf8)
        for range in [Int64(0)...10, 65_530...65_545, 131_000...200_000, Int64(whole.count - 20)...Int64(whole.count - 1)] {
            #expect(try store.attachmentBytes(reference.sha256, range) == whole[Int(range.lowerBound)...Int(range.upperBound)])
        }
        // Cut at a chunk boundary: the new last chunk was not sealed as the last one.
        let file = try #require(store.attachmentFile(reference.sha256)).path
        let handle = try #require(FileHandle(forUpdatingAtPath: file))
        try handle.truncate(atOffset: UInt64(SealedBlobFile.headerSize + 2 * SealedBlobFile.chunkSize))
        try handle.close()
        let cut = #expect(throws: DraftStoreError.self) { try store.attachmentData(reference.sha256) }
        #expect(cut?.code == .databaseDamaged)
    }

    @Test func aDownloadUnderWayIsSealedAndResumesAtAnyOffset() async throws {
        let fixture = try await Fixture()
        let directory = fixture.store.blobDirectory
        var random = SplitMix64(seed: 9)
        let bytes = Data((0..<200_000).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        let source = fixture.directory.file("download.bin")
        try bytes.write(to: URL(fileURLWithPath: source))
        let sha256 = try BlobDirectory.hash(ofFile: source).sha256
        // Pieces of odd sizes, one written again from inside a chunk (a resumed download).
        try fixture.store.writeDownloadedBytes(sha256, at: 0, bytes[0..<70_000])
        #expect(fixture.store.partialDownloadSize(sha256) == 70_000)
        try fixture.store.writeDownloadedBytes(sha256, at: 50_000, bytes[50_000..<150_001])
        try fixture.store.writeDownloadedBytes(sha256, at: 150_001, bytes[150_001...])
        #expect(fixture.store.partialDownloadSize(sha256) == 200_000)
        let stored = try await fixture.store.finishDownload(BlobTransfer(sha256: sha256, bytes: 200_000, type: "application/octet-stream", failures: 0))
        #expect(stored)
        #expect(try fixture.store.attachmentData(sha256) == bytes)
        #expect(directory.sealing != nil)
    }

    @Test func aHomeWrittenInClearIsEncryptedInPlaceAndAStopPartWayResumes() async throws {
        let directory = TemporaryDirectory("migrate")
        let markers = (1...12).map { "Clear-Marker-\($0)-zq" }
        var records: [UUID] = []
        do {
            let plain = try DraftStore(home: directory.url, options: .init(encryption: .none))
            #expect(!plain.isEncrypted)
            try await plain.importForms([SampleForms.followUpJob(), SampleForms.damageReport()])
            for marker in markers.prefix(10) {
                let session = try await plain.newRecord(formID: "follow-up-job")
                try await session.set("site", to: .text(marker))
                try await session.dismiss(reason: .escape)
                records.append(session.recordID)
            }
            // An open presentation's snapshot and an attachment, in clear too.
            let source = directory.write("note.txt", "Attachment \(markers[10])")
            let session = try await plain.newRecord(formID: "damage-report")
            try await session.set("site", to: .text(markers[11]))
            try await session.attach("document", file: source)
            records.append(session.recordID)
            try await plain.pool.write { db in try db.execute(sql: "UPDATE presentations SET owner = '0:0'") }
            try FileManager.default.removeItem(atPath: source)
        }
        #expect(try !Self.filesHolding(markers, in: directory.path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.file(DeviceKeyFile.defaultFileName)))
        // Stopped after three batches of two rows, as a kill part way would: those stay sealed.
        let stopped = #expect(throws: DraftStoreError.self) {
            try DraftStore(home: directory.url, options: .init(encryptionBatchSize: 2, stopEncryptingAfterBatches: 3))
        }
        #expect(stopped?.message.contains("after 3 batches") == true, "\(stopped?.message ?? "")")
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let partway = try DatabaseQueue(path: directory.file(DraftStore.databaseFileName), configuration: configuration)
        let (state, sealedEdits) = try await partway.read { db in
            (try String.fetchOne(db, sql: "SELECT state FROM device_encryption"),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM record_edits WHERE typeof(value) = 'blob'") ?? 0)
        }
        try partway.close()
        #expect(state == "encrypting" && sealedEdits == 6)
        // The next open goes on and finishes; every answer reads as before, and no marker is left in the home.
        let store = try DraftStore(home: directory.url, options: .init(encryptionBatchSize: 2))
        #expect(store.isEncrypted)
        for (record, marker) in zip(records, markers.prefix(10) + [markers[11]]) {
            #expect(try await store.record(record)?.answers["site"] == .text(marker))
        }
        let attached = try await store.record(records[10])?.answers["document"]
        guard case .attachment(let reference)? = attached else {
            Issue.record("no attachment: \(String(describing: attached))")
            return
        }
        #expect(try store.attachmentData(reference.sha256) == Data("Attachment \(markers[10])".utf8))
        #expect(try Self.filesHolding(markers, in: directory.path) == [])
        #expect(try await store.integrityCheck() == "ok")
        let again = try DraftStore(home: directory.url)
        #expect(try await again.record(records[0])?.answers["site"] == .text(markers[0]))
    }

    /// `fs_seal` and `fs_open` read SQLite's arguments as they are: an empty text opens as empty text (not NULL),
    /// NULL stays NULL, a place part given as an integer is its digits, a place too long for the stack buffer
    /// opens the same, and a cut value, a value opened at another place and a value to seal that is not text are
    /// refused with their messages.
    @Test func theValueFunctionsReadSQLitesArgumentsAsTheyAre() async throws {
        let fixture = try await Fixture()
        #expect(fixture.store.isEncrypted)
        let long = String(repeating: "k", count: 300)
        let row = try fixture.store.pool.read { db in
            try Row.fetchOne(db, sql: """
                SELECT fs_open(fs_seal('', 'edit', 'r', 'k'), 'edit', 'r', 'k') AS empty,
                       typeof(fs_open(fs_seal('', 'edit', 'r', 'k'), 'edit', 'r', 'k')) AS emptyType,
                       fs_open(NULL, 'edit', 'r', 'k') IS NULL AS openedNull,
                       fs_open(fs_seal('{"integer":5}', 'mutation', 42, 'r'), 'mutation', '42', 'r') AS digits,
                       fs_open(fs_seal('é "quoted"', 'edit', ?1, 'k'), 'edit', ?1, 'k') AS longPlace,
                       typeof(fs_seal('x', 'edit', 'r', 'k')) AS sealedType
                """, arguments: [long])
        }
        let opened = try #require(row)
        #expect(opened["empty"] as String? == "")
        #expect(opened["emptyType"] as String? == "text")
        #expect(opened["openedNull"] as Bool? == true)
        #expect(opened["digits"] as String? == #"{"integer":5}"#)
        #expect(opened["longPlace"] as String? == "é \"quoted\"")
        #expect(opened["sealedType"] as String? == "blob")
        for (sql, message) in [
            ("SELECT fs_open(substr(fs_seal('x', 'edit', 'r', 'k'), 1, 20), 'edit', 'r', 'k')", "A stored value (edit r k) does not open with the device key"),
            ("SELECT fs_open(fs_seal('x', 'edit', 'r', 'k'), 'edit', 'r', 'other')", "A stored value (edit r other) does not open with the device key"),
            ("SELECT fs_open('x', 'edit', 'r', 'k')", "A value (edit r k) is stored in clear in an encrypted store."),
            ("SELECT fs_seal(5, 'edit', 'r', 'k')", "A value to seal is not text."),
        ] {
            let refused = #expect(throws: DatabaseError.self) { try fixture.store.pool.read { db in try db.execute(sql: sql) } }
            #expect(refused?.message?.contains(message) == true, "\(sql): \(refused?.message ?? "")")
            #expect(refused.flatMap { DeviceCipher.storeError(in: $0.message ?? "") }?.code == .databaseDamaged, "\(sql)")
        }
    }
}

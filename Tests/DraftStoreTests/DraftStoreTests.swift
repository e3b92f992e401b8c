import Foundation
import FieldSheetTesting
import FormModel
import GRDB
import SyncCore
import Testing
@testable import DraftStore

/// The store's own rules: durability of edits with their outbox entries, forms, deletion, and bad input.
struct DraftStoreTests {
    @Test func everyEditIsStoredWithItsOutboxEntryAndAClockReading() async throws {
        let fixture = try await Fixture()
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        try await session.set("site", to: .text("A"))
        try await session.set("site", to: .text("B"))
        try await session.set("site", to: .text("B"))  // unchanged: not an edit
        // Another connection (as another process would) sees the edit once `set` returned.
        let other = try fixture.reopen()
        let record = try #require(try await other.record(session.recordID))
        #expect(record.answers["site"] == .text("B"))
        #expect(record.pending["site"] == .some(.text("B")), "an unsent edit sits on top of the synced fields")
        #expect(record.synced.isEmpty, "nothing synced yet")
        #expect(try await fixture.outboxKinds(session.recordID) == ["create", "set", "set"])
        let clocks = try await fixture.store.pool.read { db in
            try Int64.fetchAll(db, sql: "SELECT hlc FROM outbox ORDER BY mutation_id")
        }
        #expect(clocks == clocks.sorted() && Set(clocks).count == clocks.count)
        let last = try #require(clocks.last)
        let clock = try await fixture.store.pool.read { db in try Int64.fetchOne(db, sql: "SELECT clock FROM sync_state") }
        #expect(clock == last, "the device clock stands at the last edit's reading")
    }

    @Test func aNewRecordStartsWithTheFormDefaultsWhichAreNotUserContent() async throws {
        let fixture = try await Fixture()
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        #expect(await session.answers == ["priority": .choice("normal")])
        #expect(await session.changes.hasUserContent == false)
        #expect(await session.relevantFields.map(\.id) == ["site", "priority", "count"])
        try await session.set("priority", input: "3")
        #expect(await session.relevantFields.map(\.id) == ["site", "priority", "count", "notes"])
    }

    @Test func reimportingTheSameFormIsANoOpButAChangedSameVersionIsRefused() async throws {
        let fixture = try await Fixture(editableAfterSubmit: false)
        #expect(try await fixture.store.importForms([SampleForms.followUpJob()]) == [.unchanged(FormKey(id: "follow-up-job", version: 1))])
        var changed = SampleForms.followUpJob()
        changed.title = "Another title"
        let wide = SampleForms.wideForm(fieldCount: 3)
        let error = await #expect(throws: DraftStoreError.self) { try await fixture.store.importForms([wide, changed]) }
        #expect(error?.code == .formVersionClash)
        // Nothing half-imported: the other form of the batch is not stored either.
        #expect(try await fixture.store.forms().map(\.id) == ["follow-up-job"])
        changed.version = 2
        try await fixture.store.importForms([changed])
        #expect(try await fixture.store.forms().first?.versions == [1, 2])
        #expect(try await fixture.store.form(id: "follow-up-job").title == "Another title")
    }

    /// A submitted record is edited on the version it was submitted on; a draft opens on the newest version
    /// (VersionMoveTests has the answers a move does not carry).
    @Test func aSubmittedRecordKeepsTheFormVersionItWasStartedOnAndADraftMovesToTheNewest() async throws {
        let fixture = try await Fixture()
        let draft = try await fixture.draft()
        let submitted = try await fixture.submitted()
        try await fixture.store.importForms([SampleForms.followUpJob(version: 2, editableAfterSubmit: true)])
        let edit = try await fixture.store.editSubmitted(submitted)
        #expect(edit.form.version == 1 && edit.versionMove == nil)
        try await edit.dismiss(reason: .escape)
        let resumed = try await fixture.store.resumeDraft(draft)
        #expect(resumed.form.version == 2 && resumed.versionMove?.dropped == [])
        #expect(await resumed.answers["site"] == .text("B2 basement"))
        try await resumed.dismiss(reason: .escape)
    }

    @Test func deletingADraftIsItsOwnActionAndRefusesSubmittedRecords() async throws {
        let fixture = try await Fixture()
        let draft = try await fixture.draft()
        let submitted = try await fixture.submitted()
        try await fixture.store.deleteDraft(draft)
        #expect(try await fixture.store.record(draft) == nil)
        #expect(try await fixture.store.outboxCount(record: draft) == 0)
        let error = await #expect(throws: DraftStoreError.self) { try await fixture.store.deleteDraft(submitted) }
        #expect(error?.code == .notADraft)
        let missing = await #expect(throws: DraftStoreError.self) { try await fixture.store.deleteDraft(UUID()) }
        #expect(missing?.code == .unknownRecord)
    }

    @Test func aRecordOpenInAnotherLiveSessionCannotBeOpenedOrDeleted() async throws {
        let fixture = try await Fixture()
        let draft = try await fixture.draft()
        let first = try await fixture.store.resumeDraft(draft)
        let error = await #expect(throws: DraftStoreError.self) { try await fixture.store.resumeDraft(draft) }
        #expect(error?.code == .recordInUse)
        let deleting = await #expect(throws: DraftStoreError.self) { try await fixture.store.deleteDraft(draft) }
        #expect(deleting?.code == .recordInUse)
        try await first.dismiss(reason: .escape)
        try await fixture.store.deleteDraft(draft)
    }

    @Test func listingsFilterByStateNewestFirst() async throws {
        let fixture = try await Fixture()
        let a = try await fixture.draft(site: "A")
        let b = try await fixture.submitted(site: "B")
        let c = try await fixture.draft(site: "C")
        let drafts = try await fixture.store.records(state: .draft)
        #expect(Set(drafts.map(\.id)) == [a, c])
        #expect(drafts.map(\.updatedAt) == drafts.map(\.updatedAt).sorted(by: >))
        #expect(try await fixture.store.records(state: .submitted).map(\.id) == [b])
        #expect(try await fixture.store.records().count == 3)
        #expect(try await fixture.store.records().first?.formTitle == "New Follow-up Job")
    }

    @Test func submittedRecordsOfAFormThatForbidsEditingCannotBeOpened() async throws {
        let fixture = try await Fixture(editableAfterSubmit: false)
        let id = try await fixture.submitted()
        let error = await #expect(throws: DraftStoreError.self) { try await fixture.store.editSubmitted(id) }
        #expect(error?.code == .notEditable)
        let resume = await #expect(throws: DraftStoreError.self) { try await fixture.store.resumeDraft(id) }
        #expect(resume?.code == .notADraft)
    }

    // MARK: - Bad input

    @Test func unknownFormsAndFieldsAndWrongTypesAreNamed() async throws {
        let fixture = try await Fixture()
        let form = await #expect(throws: DraftStoreError.self) { try await fixture.store.newRecord(formID: "no-such-form") }
        #expect(form?.code == .unknownForm)
        #expect(form?.message.contains("follow-up-job") == true)
        let session = try await fixture.store.newRecord(formID: "follow-up-job")
        let field = await #expect(throws: DraftStoreError.self) { try await session.set("colour", to: .text("red")) }
        #expect(field?.code == .unknownField)
        #expect(field?.message.contains("site, priority, count, notes") == true)
        let type = await #expect(throws: DraftStoreError.self) { try await session.set("count", to: .text("three")) }
        #expect(type?.code == .wrongType)
        #expect(type?.message.contains("\"count\"") == true)
        // Typed input that does not fit is kept raw and reported, never thrown away.
        let issues = try await session.set("count", input: "three")
        #expect(issues.count == 1 && issues.first?.fieldID == "count")
        #expect(await session.answers["count"] == .raw("three"))
        let range = try await session.set("count", input: "12")
        #expect(range.map(\.code) == [.outOfRange])
    }

    @Test func aFullDiskFailsTheEditWithAClearMessageAndKeepsWhatWasSaved() async throws {
        let directory = TemporaryDirectory("full")
        do {
            let setup = try DraftStore(home: directory.url)
            try await setup.importForms([SampleForms.followUpJob()])
        }
        let pages = try await DraftStore(home: directory.url).pool.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count")! }
        let store = try DraftStore(home: directory.url, options: .init(maximumPageCount: pages + 2))
        let session = try await store.newRecord(formID: "follow-up-job")
        try await session.set("site", to: .text("saved before the disk filled"))
        var failure: DraftStoreError?
        for index in 0..<200 where failure == nil {
            do {
                try await session.set("notes", to: .text(String(repeating: "x", count: 2_000) + "\(index)"))
            } catch let error as DraftStoreError {
                failure = error
            }
        }
        let error = try #require(failure)
        #expect(error.code == .storageFull)
        #expect(error.message.contains("\"notes\""))
        #expect(error.message.contains("full"))
        let reopened = try DraftStore(home: directory.url)
        #expect(try await reopened.record(session.recordID)?.answers["site"] == .text("saved before the disk filled"))
        #expect(try await reopened.integrityCheck() == "ok")
    }

    @Test func aHomeThatIsAFileIsRefused() throws {
        let directory = TemporaryDirectory("home")
        let file = directory.write("not-a-dir", "x")
        let error = #expect(throws: DraftStoreError.self) { try DraftStore(home: URL(fileURLWithPath: file)) }
        #expect(error?.code == .homeNotUsable)
        #expect(error?.message.contains(file) == true)
    }

    @Test func aCorruptDatabaseIsReportedAndLeftUntouched() throws {
        let directory = TemporaryDirectory("corrupt")
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let path = directory.file(DraftStore.databaseFileName)
        try garbage.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: DraftStoreError.self) { try DraftStore(home: directory.url) }
        #expect(error?.code == .databaseDamaged)
        #expect(error?.message.contains(path) == true)
        #expect(FileManager.default.contents(atPath: path) == garbage)
    }

    @Test func aDatabaseFromANewerAppVersionIsRefusedAndLeftUntouched() async throws {
        let directory = TemporaryDirectory("newer")
        _ = try DraftStore(home: directory.url)
        let path = directory.file(DraftStore.databaseFileName)
        do {
            // What a newer version would leave behind: a migration this one does not know.
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
            }
            try queue.close()
        }
        let files = [path, path + "-wal", path + "-shm"]
        let before = files.map { FileManager.default.contents(atPath: $0) }
        let error = #expect(throws: DraftStoreError.self) { try DraftStore(home: directory.url) }
        #expect(error?.code == .newerDatabase)
        #expect(error?.message.contains("v99-from-the-future") == true)
        #expect(error?.message.contains(path) == true)
        // Not a byte written: no probe table, no schema change, no -wal or -shm left beside it.
        let after = files.map { FileManager.default.contents(atPath: $0) }
        #expect(after[0] == before[0], "the database file changed: \(before[0]?.count ?? 0) → \(after[0]?.count ?? 0) bytes")
        #expect(after[1] == before[1] && after[2] == before[2], "side files: \(files.filter { FileManager.default.fileExists(atPath: $0) })")
    }
}

/// Telling a presentation's owner that is still running from one that is gone.
struct ProcessIdentityTests {
    @Test func thisProcessIsAliveAndAMadeUpOneIsNot() {
        #expect(ProcessIdentity.isAlive(ProcessIdentity.current))
        #expect(!ProcessIdentity.isAlive("0:0"))
        #expect(!ProcessIdentity.isAlive("garbage"))
        // Our own pid with another start time is a previous process that had the same id.
        #expect(!ProcessIdentity.isAlive("\(getpid()):1"))
    }

    @Test func aKilledButUnreapedChildCountsAsGone() async throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        try child.run()
        let owner = ProcessIdentity.owner(of: child.processIdentifier)
        #expect(ProcessIdentity.isAlive(owner))
        kill(child.processIdentifier, SIGKILL)
        #expect(await eventually(timeout: 10) { !ProcessIdentity.isAlive(owner) })
        // Reaped (Foundation's process monitor waits for it): still gone.
        #expect(await eventually(timeout: 10) { !child.isRunning })
        #expect(!ProcessIdentity.isAlive(owner))
    }
}

import DraftStore
import FieldSheetTesting
import Foundation
import GRDB
import Testing

/// Bad input on the command line: a clear message naming the thing, a non-zero exit, nothing damaged.
struct CLIBadInputTests {
    @Test func anUnknownFormIsNamedWithTheFormsThatExist() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run("fill", "no-such-form", "--dismiss")
        #expect(fill.status == 1)
        #expect(fill.stderr.contains("no form \"no-such-form\""))
        #expect(fill.stderr.contains("follow-up-job"))
        #expect(fill.stdout.isEmpty)
    }

    @Test func anUnknownFieldSavesNothing() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run("fill", "follow-up-job", "--set", "site=B2", "--set", "colour=red", "--dismiss")
        #expect(fill.status == 1)
        #expect(fill.stderr.contains("no field \"colour\""))
        #expect(fill.stderr.contains("site, priority, count, notes"))
        #expect(try await cli.run("records").stdout.isEmpty)
    }

    @Test func aMalformedSetAndConflictingFlagsAreUsageErrors() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let malformed = try await cli.run("fill", "follow-up-job", "--set", "site", "--dismiss")
        #expect(malformed.status == 64)
        #expect(malformed.stderr.contains("FIELD=VALUE"))
        let both = try await cli.run("fill", "follow-up-job", "--complete", "--dismiss")
        #expect(both.status == 64)
        let discard = try await cli.run("fill", "follow-up-job", "--discard")
        #expect(discard.status == 64)
        #expect(try await cli.run("records").stdout.isEmpty)
    }

    @Test func aValueOfTheWrongTypeIsNamedOnCompleteAndKeptAsTyped() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let fill = try await cli.run("fill", "follow-up-job", "--set", "site=B2", "--set", "priority=urgent", "--complete")
        #expect(fill.status == 2)
        #expect(fill.stderr.contains("priority (Priority): Choose one of: Low, Normal, High."))
        let id = try #require(CLIHome.recordID(fill))
        #expect(try await cli.run("show", id, "--json").stdout.contains("\"raw\" : \"urgent\""))
    }

    @Test func anUnknownOrMalformedRecordIDIsNamed() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let unknown = try await cli.run("resume", UUID().uuidString, "--dismiss")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no record"))
        let malformed = try await cli.run("show", "not-an-id")
        #expect(malformed.status == 64)
        #expect(malformed.stderr.contains("not a record id"))
    }

    @Test func aHomeThatIsAFileIsRefused() async throws {
        let cli = CLIHome()
        let file = cli.directory.write("plain-file", "x")
        let result = try await Subprocess.run(CLIHome.binary, ["--home", file, "records"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(file) is a file, not a directory"))
    }

    @Test func aHomeThatCannotBeCreatedIsRefused() async throws {
        let cli = CLIHome()
        let file = cli.directory.write("plain-file", "x")
        let result = try await Subprocess.run(CLIHome.binary, ["--home", file + "/home", "forms"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("Could not create the FieldSheet home \(file)/home"))
        #expect(result.stderr.contains("--home or FIELDSHEET_HOME"))
    }

    @Test func theHomeComesFromTheEnvironmentWhenNotGiven() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let result = try await Subprocess.run(CLIHome.binary, ["forms"], environment: ["FIELDSHEET_HOME": cli.home])
        #expect(result.stdout.contains("follow-up-job\tv1\tNew Follow-up Job"))
    }

    @Test func aCorruptDatabaseIsReportedAndLeftUntouched() async throws {
        let cli = CLIHome()
        try FileManager.default.createDirectory(atPath: cli.home, withIntermediateDirectories: true)
        let path = cli.home + "/" + DraftStore.databaseFileName
        let garbage = Data(String(repeating: "not a database ", count: 600).utf8)
        try garbage.write(to: URL(fileURLWithPath: path))
        let result = try await cli.run("records")
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(path) is damaged or is not a FieldSheet database"))
        #expect(FileManager.default.contents(atPath: path) == garbage)
    }

    @Test func aDatabaseFromANewerVersionIsRefused() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let path = cli.home + "/" + DraftStore.databaseFileName
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v42-later')") }
        try queue.close()
        let result = try await cli.run("records")
        #expect(result.status == 1)
        #expect(result.stderr.contains("newer version of FieldSheet"))
        #expect(result.stderr.contains("v42-later"))
    }

    @Test func importingIsAllOrNothing() async throws {
        let cli = CLIHome()
        let good = cli.directory.write("good.json", SampleForms.followUpJobJSON())
        let bad = cli.directory.write("bad.json", #"{ "id": "broken", "version": 1, "title": "Broken", "completionLabel": "Add", "pages": [ { "id": "p", "fields": [ { "id": "x", "kind": "colour", "label": "X" } ] } ] }"#)
        let missing = cli.directory.file("missing.json")
        let result = try await cli.run("forms", "import", good, bad, missing)
        #expect(result.status == 1)
        #expect(result.stderr.contains("bad.json"))
        #expect(result.stderr.contains("missing.json"))
        #expect(result.stderr.contains("Nothing was imported"))
        #expect(try await cli.run("forms").stdout.isEmpty)
        let again = try await cli.run("forms", "import", good)
        #expect(again.status == 0)
        #expect(again.stdout.contains("imported\tfollow-up-job\tv1"))
        #expect(try await cli.run("forms", "import", good).stdout.contains("unchanged\tfollow-up-job\tv1"))
    }

    // A full disk: no file may grow past 200 KiB (RLIMIT_FSIZE, in 512-byte blocks), room for the database as
    // it is but not for a 120 KB answer written twice (the record and its outbox row), so that write fails;
    // the message names the field and what to do, the exit is non-zero, and what was saved before is intact.
    @Test func aFullDiskNamesTheFieldAndDamagesNothing() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let id = try #require(CLIHome.recordID(try await cli.run("fill", "follow-up-job", "--set", "site=Saved before", "--dismiss")))
        let big = String(repeating: "x", count: 120_000)
        let script = "trap '' XFSZ; ulimit -f 400; exec \"$0\" \"$@\""
        let result = try await Subprocess.run("/bin/sh", ["-c", script, CLIHome.binary, "--home", cli.home, "resume", id, "--set", "notes=\(big)", "--dismiss"])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("\"notes\""))
        #expect(result.stderr.contains("free some space"))
        let shown = try await cli.run("show", id, "--json")
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("Saved before"))
        let store = try DraftStore(home: URL(fileURLWithPath: cli.home))
        #expect(try await store.integrityCheck() == "ok")
    }
}

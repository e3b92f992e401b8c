import FieldSheetTesting
import Foundation
import Testing

/// `fieldsheet login|sync --download-attachments ahead|on-open` and `fieldsheet status`, run as a person would,
/// against the real server: when a pulled record's photo reaches the device.
struct AttachmentDownloadCLITests {
    /// A server with the damage report, a collector's device that synced one report with a photo, and a
    /// reviewer's token. Returns the photo's hash and the record's id.
    static func serverWithAPhoto() async throws -> (server: ServerProcess, reviewer: String, sha256: String, record: String) {
        let server = ServerProcess()
        try await server.createProject("demo")
        let collector = try await server.addUser("alice", project: "demo")
        let reviewer = try await server.addUser("rita", project: "demo", role: "reviewer")
        try await server.publish(json: SampleForms.damageReportJSON(), project: "demo")
        try await server.start(port: 0)
        let phone = CLIHome()
        try await login(phone, server, token: collector)
        let photo = phone.directory.file("IMG_0042.jpg")
        print("seed 42")
        SampleForms.writeRandomFile(photo, size: 300_000, seed: 42)
        let fill = try await phone.run(["fill", "damage-report", "--set", "site=Depot", "--attach", "photo=\(photo)", "--complete"])
        #expect(fill.status == 0, "\(fill.output)")
        let record = try #require(CLIHome.recordID(fill))
        let sync = try await phone.run("sync")
        #expect(sync.status == 0, "\(sync.output)")
        #expect(try await phone.run("status").stdout.contains("attachments to upload: 0\n"))
        let sha256 = try #require(blobs(phone).first)
        return (server, reviewer, sha256, record)
    }

    static func login(_ home: CLIHome, _ server: ServerProcess, token: String, _ extra: [String] = []) async throws {
        let login = try await Subprocess.run(CLIHome.binary, ["--home", home.home, "login", server.url, "--project", "demo"] + extra, environment: ["FIELDSHEET_TOKEN": token])
        #expect(login.status == 0, "\(login.output)")
    }

    static func blobs(_ home: CLIHome) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: home.home + "/attachments")) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    @Test func aheadSavedWithTheLoginFetchesThePhotoAtTheSyncWithoutOpeningTheRecord() async throws {
        let (server, reviewer, sha256, _) = try await Self.serverWithAPhoto()
        defer { server.kill() }
        let office = CLIHome()
        try await Self.login(office, server, token: reviewer, ["--download-attachments", "ahead"])
        let login = try String(contentsOfFile: office.home + "/login.json", encoding: .utf8)
        #expect(login.contains(#""attachmentDownloads" : "ahead""#), "\(login)")
        #expect(try await office.run("status").stdout.contains("attachment downloads: ahead (every sync fetches all photos and files)"))
        let sync = try await office.run("sync")
        #expect(sync.status == 0, "\(sync.output)")
        #expect(Self.blobs(office) == [sha256])
    }

    @Test func onOpenFetchesThePhotoOnlyAfterTheRecordWasOpened() async throws {
        let (server, reviewer, sha256, record) = try await Self.serverWithAPhoto()
        defer { server.kill() }
        let office = CLIHome()
        try await Self.login(office, server, token: reviewer)
        #expect(try await office.run("status").stdout.contains("attachment downloads: on-open (a record's photos and files once it is opened)"))
        #expect(try await office.run("sync").status == 0)
        #expect(Self.blobs(office).isEmpty, "on-open: nothing is downloaded before the record is opened")
        #expect(try await office.run("show", record).stdout.contains("IMG_0042.jpg"))
        // Opening the record (and leaving it untouched) asks for its photo; the next sync brings it.
        _ = try await office.run(["edit", record, "--dismiss"])
        #expect(try await office.run("status").stdout.contains("attachments to download: 1"))
        #expect(try await office.run("sync").status == 0)
        #expect(Self.blobs(office) == [sha256])
    }

    @Test func syncOverridesTheSavedChoiceForOneRunAndLoggingInAgainKeepsIt() async throws {
        let (server, reviewer, sha256, _) = try await Self.serverWithAPhoto()
        defer { server.kill() }
        let office = CLIHome()
        try await Self.login(office, server, token: reviewer, ["--download-attachments", "ahead"])
        #expect(try await office.run(["sync", "--download-attachments", "on-open"]).status == 0)
        #expect(Self.blobs(office).isEmpty, "the run's on-open wins over the saved ahead")
        // Logging in again without the option keeps the saved choice.
        try await Self.login(office, server, token: reviewer)
        #expect(try await office.run("status").stdout.contains("attachment downloads: ahead"))
        #expect(try await office.run("sync").status == 0)
        #expect(Self.blobs(office) == [sha256])

        let laptop = CLIHome()
        try await Self.login(laptop, server, token: reviewer)
        #expect(try await laptop.run(["sync", "--download-attachments", "ahead"]).status == 0)
        #expect(Self.blobs(laptop) == [sha256], "the run's ahead wins over the saved on-open")
        let bad = try await laptop.run(["sync", "--download-attachments", "later"])
        #expect(bad.status == 64, "\(bad.output)")
        #expect(bad.stderr.contains("ahead") && bad.stderr.contains("on-open"), "\(bad.output)")
    }

    @Test func aLoginFileWrittenBeforeTheSettingStillLoadsAsOnOpen() async throws {
        let (server, reviewer, sha256, _) = try await Self.serverWithAPhoto()
        defer { server.kill() }
        let office = CLIHome()
        try await Self.login(office, server, token: reviewer)
        // login.json as versions before the setting wrote it: no attachmentDownloads key.
        let old = #"{"project":"demo","serverURL":"\#(server.url)","token":"\#(reviewer)"}"#
        try Data(old.utf8).write(to: URL(fileURLWithPath: office.home + "/login.json"))
        let status = try await office.run("status")
        #expect(status.stdout.contains("server: \(server.url) (project demo)"), "\(status.output)")
        #expect(status.stdout.contains("attachment downloads: on-open"), "\(status.output)")
        #expect(try await office.run("sync").status == 0)
        #expect(Self.blobs(office).isEmpty)
        #expect(try await office.run(["sync", "--download-attachments", "ahead"]).status == 0)
        #expect(Self.blobs(office) == [sha256])

        // A value this version does not know is a clear error, not a silent default.
        let unknown = #"{"attachmentDownloads":"sometimes","project":"demo","serverURL":"\#(server.url)","token":"\#(reviewer)"}"#
        try Data(unknown.utf8).write(to: URL(fileURLWithPath: office.home + "/login.json"))
        let refused = try await office.run("sync")
        #expect(refused.status == 2, "\(refused.output)")
        #expect(refused.stderr.contains(#"attachmentDownloads is "sometimes"; expected "on-open" or "ahead""#), "\(refused.output)")
        #expect(!refused.stderr.contains(reviewer), "the token is never printed")
    }
}

import FieldSheetTesting
import Foundation
import SyncClient
import Testing

/// `login.json`: the attachment download setting is saved, read back, carried into the sync configuration the
/// CLI and the app build their engines from, and absent from files written before it (read as on-open).
struct DeviceLoginTests {
    @Test func theDownloadSettingIsSavedReadBackAndCarriedIntoTheConfiguration() throws {
        let directory = TemporaryDirectory("login")
        let login = DeviceLogin(serverURL: "http://127.0.0.1:1", project: "demo", token: "t", attachmentDownloads: .ahead)
        try login.save(in: directory.url)
        let loaded = try #require(try DeviceLogin.load(from: directory.url))
        #expect(loaded == login)
        #expect(loaded.configuration.attachmentDownloads == .ahead)
        #expect(SyncConfiguration(serverURL: "u", project: "p", token: "t").attachmentDownloads == .onOpen)
    }

    @Test func aFileWithoutTheSettingReadsAsOnOpen() throws {
        let directory = TemporaryDirectory("login")
        try Data(#"{"caFile":"/etc/ca.pem","project":"demo","serverURL":"https://sync.example.org","token":"t"}"#.utf8)
            .write(to: directory.url.appendingPathComponent(DeviceLogin.fileName))
        let loaded = try #require(try DeviceLogin.load(from: directory.url))
        #expect(loaded.attachmentDownloads == .onOpen)
        #expect(loaded.caFile == "/etc/ca.pem")
        #expect(loaded.configuration.attachmentDownloads == .onOpen)
    }

    @Test func anUnknownValueOrAMissingKeyIsAClearError() throws {
        let directory = TemporaryDirectory("login")
        let file = directory.url.appendingPathComponent(DeviceLogin.fileName)
        try Data(#"{"attachmentDownloads":"never","project":"demo","serverURL":"https://s","token":"secret"}"#.utf8).write(to: file)
        let unknown = #expect(throws: LoginError.self) { try DeviceLogin.load(from: directory.url) }
        #expect(unknown?.description.contains(#"attachmentDownloads is "never"; expected "on-open" or "ahead""#) == true, "\(String(describing: unknown))")
        #expect(unknown?.description.contains("secret") == false)
        try Data(#"{"project":"demo","serverURL":"https://s"}"#.utf8).write(to: file)
        let missing = #expect(throws: LoginError.self) { try DeviceLogin.load(from: directory.url) }
        #expect(missing?.description.contains("token is missing") == true, "\(String(describing: missing))")
    }
}

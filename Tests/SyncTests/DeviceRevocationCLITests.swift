import FieldSheetTesting
import Foundation
import Testing

/// A device enrolled with a one-time login code (`fieldsheet-server user code`, `fieldsheet login --code`), then
/// signed out by the project's admin while it holds an unsent record: the real server, the real CLI, libcurl.
struct DeviceRevocationCLITests {
    static let followUpJob = PackagePaths.file("Schema/forms/follow-up-job.json")

    @Test func aCodeEnrolsOneDeviceAndASignedOutDeviceSaysSoAndKeepsItsRecords() async throws {
        let server = ServerProcess()
        try await server.createProject("demo")
        _ = try await server.addUser("ana", project: "demo")
        try await server.admin(["form", "publish", Self.followUpJob, "--project", "demo"])
        try await server.start(port: 0)

        let made = try await server.admin(["user", "code", "ana", "--project", "demo", "--expires-in", "2"])
        #expect(made.status == 0, "\(made.output)")
        let code = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(code.count == 11 && code.contains("-"), "\(made.output)")
        let nobody = try await Subprocess.run(server.binary, ["user", "code", "nobody", "--project", "demo"] + server.storageArguments)
        #expect(nobody.status == 1 && nobody.stderr.contains("nobody is not a member of demo"), "\(nobody.output)")

        let phone = CLIHome()
        // Typed in lower case and without the hyphen: still the code.
        let typed = code.lowercased().replacingOccurrences(of: "-", with: "")
        let login = try await phone.run(["login", "--server", server.url, "--code", typed])
        #expect(login.status == 0, "\(login.output)")
        #expect(login.stdout.contains("as a member of demo; 1 form"), "\(login.output)")
        let again = try await CLIHome().run(["login", "--server", server.url, "--code", code])
        #expect(again.status == 4, "\(again.output)")
        #expect(again.stderr.contains("used already"), "\(again.output)")
        let wrong = try await CLIHome().run(["login", "--server", server.url, "--code", "ABCDE-FGHJK"])
        #expect(wrong.status == 4 && wrong.stderr.contains("not known"), "\(wrong.output)")

        let sent = try await phone.run(["fill", "follow-up-job", "--set", "site=B2", "--set", "technicians=2", "--complete"])
        #expect(try await phone.run("sync").status == 0)
        let unsent = try await phone.run(["fill", "follow-up-job", "--set", "site=Basement", "--set", "technicians=1", "--complete"])
        let unsentId = try #require(CLIHome.recordID(unsent))
        _ = try #require(CLIHome.recordID(sent))

        let revoke = try await server.admin(["token", "revoke", "ana"])
        #expect(revoke.status == 0 && revoke.stdout.contains("revoked 2 tokens"), "\(revoke.output)")
        let sync = try await phone.run("sync")
        #expect(sync.status == 4, "\(sync.output)")
        #expect(sync.stderr.contains("This device was signed out by your project's admin."), "\(sync.output)")
        let status = try await phone.run("status")
        #expect(status.stdout.contains("signed out: This device was signed out by your project's admin."), "\(status.output)")
        #expect(status.stdout.contains("in 1 record"), "the unsent record waits: \(status.output)")
        let records = try await phone.run("records")
        #expect(records.status == 0 && records.stdout.contains(unsentId), "\(records.output)")
        let shown = try await phone.run(["show", unsentId, "--json"])
        #expect(shown.status == 0 && shown.stdout.contains("Basement"), "\(shown.output)")

        // A new code for the same person: the device logs in again, the mark goes, and the record is sent.
        let second = try await server.admin(["user", "code", "ana", "--project", "demo"])
        let relogin = try await phone.run(["login", "--server", server.url, "--code", second.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(relogin.status == 0, "\(relogin.output)")
        #expect(!(try await phone.run("status")).stdout.contains("signed out"))
        let resent = try await phone.run("sync")
        #expect(resent.status == 0 && resent.stdout.hasPrefix("pushed 1,"), "\(resent.output)")
    }
}

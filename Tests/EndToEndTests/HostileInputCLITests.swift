import DraftStore
import FieldSheetTesting
import FormModel
import Foundation
import Testing

/// Hostile forms and values through the built executables: deep nesting is a finding and a non-zero exit
/// (never a signal), control characters never reach the terminal raw, and thousands of `--set`s are all stored.
struct HostileInputCLITests {
    static let deepConditions = [
        String(repeating: "(", count: 50_000) + "priority == 'high'" + String(repeating: ")", count: 50_000),
        String(repeating: "not ", count: 50_000) + "priority",
        String(repeating: "(not ", count: 20_000) + "priority" + String(repeating: ")", count: 20_000),
    ]

    /// The follow-up job with `condition` as the notes field's `relevant`.
    static func formJSON(relevant condition: String) -> String {
        let escaped = String(decoding: try! JSONEncoder().encode(condition), as: UTF8.self)
        return SampleForms.followUpJobJSON().replacingOccurrences(of: #""relevant": "priority == 'high'""#, with: #""relevant": \#(escaped)"#)
    }

    static let signalled: Set<Int32> = [128 + SIGSEGV, 128 + SIGBUS, 128 + SIGILL, 128 + SIGTRAP, 128 + SIGABRT]

    @Test(arguments: deepConditions.indices)
    func lintPreviewAndImportAnswerADeepConditionWithAFinding(index: Int) async throws {
        let cli = CLIHome()
        let file = cli.directory.write("deep.json", Self.formJSON(relevant: Self.deepConditions[index]))
        for arguments in [["lint", file], ["preview", "--summary", file], ["forms", "import", file]] {
            let result = try await cli.run(arguments)
            #expect(result.status == 1, "\(arguments[0]): \(result.output.prefix(2_000))")
            #expect(!result.timedOut)
            let text = result.stdout + result.stderr
            #expect(text.contains("deep.json:"), "\(arguments[0])")
            #expect(text.contains("error[relevance-syntax] $.pages[0].fields[3].relevant"), "\(arguments[0]): \(text.prefix(1_000))")
            #expect(text.contains("levels deep") || text.contains("characters long"))
        }
        #expect(try await cli.run("forms").stdout.isEmpty)  // nothing imported
    }

    @Test func deeplyNestedJSONIsAFindingForLint() async throws {
        let cli = CLIHome()
        let file = cli.directory.write("nested.json", String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000))
        let result = try await cli.run("lint", file)
        #expect(result.status == 1)
        #expect(result.stdout.contains("nested.json:1:65: error[json-syntax] $: The document nests deeper than 64 levels."))
    }

    @Test func fillOfAStoredFormWithADeepConditionDoesNotCrash() async throws {
        // A form stored before the limits existed (say, pulled from an older server): it still fills,
        // with the unreadable condition treated as always relevant.
        let cli = CLIHome()
        var form = SampleForms.followUpJob()
        form.pages[0].fields[3].relevant = Self.deepConditions[0]
        do {
            let store = try DraftStore(home: URL(fileURLWithPath: cli.home))
            try await store.importForms([form])
        }
        let fill = try await cli.run("fill", "follow-up-job", "--set", "site=B2", "--set", "notes=n", "--complete")
        #expect(fill.status == 0, "\(fill.output)")
        let id = try #require(CLIHome.recordID(fill))
        #expect(try await cli.run("show", id).stdout.contains("Notes: n"))
    }

    /// What another person can write into a value: retitle the window, write the clipboard, clear the screen.
    static let hostileValue = "B2\u{1B}]0;pwned\u{07}\u{1B}]52;c;cm0gLXJmIH4=\u{07}\u{1B}[2J\u{9B}31m"

    static func expectNoEscapes(_ text: String, _ what: String) {
        #expect(!text.contains("\u{1B}"), "\(what) printed ESC")
        #expect(!text.contains("\u{07}"), "\(what) printed BEL")
        #expect(!text.contains("\u{9B}"), "\(what) printed CSI (C1)")
    }

    @Test func showRecordsAndLineModeShowControlCharactersAsSymbols() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob(editableAfterSubmit: true)
        let fill = try await cli.run("fill", "follow-up-job", "--set", "site=\(Self.hostileValue)", "--set", "count=\u{1B}[2J", "--dismiss")
        #expect(fill.status == 3, "\(fill.output)")
        Self.expectNoEscapes(fill.stderr, "fill's messages")  // "count: Enter a whole number… (kept as typed: …)"
        let id = try #require(CLIHome.recordID(fill))
        let show = try await cli.run("show", id)
        #expect(show.status == 0)
        Self.expectNoEscapes(show.stdout, "show")
        #expect(show.stdout.contains("Site: B2␛]0;pwned␇␛]52;c;cm0gLXJmIH4=␇␛[2J\u{FFFD}31m"))
        // The JSON form keeps the value exactly, escaped as JSON does.
        let json = try await cli.run("show", id, "--json")
        Self.expectNoEscapes(json.stdout, "show --json")
        #expect(json.stdout.contains(#"\u001b]0;pwned"#))
        // Line mode shows the current answer in its prompt.
        let resume = try await cli.run(["resume", id], stdin: "")
        Self.expectNoEscapes(resume.stderr + resume.stdout, "line mode")
        #expect(resume.stderr.contains("␛]0;pwned"))
        // An error that echoes an argument.
        let bad = try await cli.run("show", "\u{1B}]0;pwned\u{07}")
        #expect(bad.status == 64)
        Self.expectNoEscapes(bad.stderr, "a usage error")
        #expect(bad.stderr.contains("␛]0;pwned␇"))
    }

    @Test func fiveThousandSetsAreAllStored() async throws {
        let cli = CLIHome()
        let file = cli.directory.write("wide.json", SampleForms.wideFormJSON(fieldCount: 5_000))
        #expect(try await cli.run("forms", "import", file).status == 0)
        let sets = (0..<5_000).flatMap { ["--set", "f\($0)=value \($0)"] }
        let fill = try await cli.run(["fill", "wide-form"] + sets + ["--complete"], timeout: 600)
        #expect(fill.status == 0, "\(fill.output.prefix(2_000))")
        let id = try #require(CLIHome.recordID(fill))
        let show = try await cli.run("show", id, "--json")
        let record = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        let answers = try #require(record["answers"] as? [String: Any])
        #expect(answers.count == 5_000)
        #expect((answers["f4999"] as? [String: String])?["text"] == "value 4999")
    }

    @Test func theDeviceHomeAndDatabaseAreTheOwnersOnly() async throws {
        let cli = CLIHome()
        try await cli.importFollowUpJob()
        let attributes = { (path: String) throws -> Int in
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
        }
        #expect(try attributes(cli.home) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: cli.home).filter { $0.hasPrefix(DraftStore.databaseFileName) }
        #expect(files.contains(DraftStore.databaseFileName))
        for file in files {
            #expect(try attributes(cli.home + "/" + file) & 0o077 == 0, "\(file) is readable by others")
        }
    }

    @Test func publishingADeepConditionWithTheAdminCommandFailsCleanly() async throws {
        let server = ServerProcess()
        try await server.createProject("alpha")
        let file = server.data.write("deep.json", Self.formJSON(relevant: Self.deepConditions[1]))
        let result = try await Subprocess.run(server.binary, ["form", "publish", file, "--project", "alpha", "--data", server.dataDirectory])
        #expect(result.status == 1, "\(result.output.prefix(2_000))")
        #expect(!Self.signalled.contains(result.status))
        #expect(result.stderr.contains("not published"))
        #expect(result.stderr.contains("levels deep") || result.stderr.contains("characters long"))
        #expect(result.stderr.count < 5_000, "the message echoes the whole condition")
        // And the same project takes a sound form afterwards.
        try await server.publish(json: SampleForms.followUpJobJSON(), project: "alpha")
    }
}

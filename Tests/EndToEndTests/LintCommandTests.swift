import FieldSheetTesting
import Foundation
import Testing

struct LintCommandTests {
    static func fieldsheet(_ arguments: [String]) async throws -> ProcessResult {
        try await Subprocess.run(PackagePaths.debugProduct("fieldsheet"), arguments)
    }

    @Test func theExampleFormsLintClean() async throws {
        let forms = ["add-note", "filter-jobs", "follow-up-job", "site-inspection"].map { PackagePaths.file("Schema/forms/\($0).json") }
        let result = try await Self.fieldsheet(["lint"] + forms)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("4 forms checked: 0 errors, 0 warnings"))
    }

    @Test func aFormWithoutATitleFailsWithAFindingNamingFileRuleAndPath() async throws {
        let result = try await Self.fieldsheet(["lint", PackagePaths.file("Tests/schema/invalid/missing-title.json")])
        #expect(result.status == 1)
        #expect(result.stdout.contains("Tests/schema/invalid/missing-title.json:1:1: error[schema] $: The form is missing the required property \"title\"."))
        #expect(result.stdout.contains("fix: Add \"title\""))
    }

    @Test func stackedPopoversFail() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let more = #"{ "id": "more-filters", "version": 1, "title": "More Filters", "presentation": "popover", "anchor": "more", "parent": "filter-jobs", "completionLabel": "Apply", "pages": [{ "id": "p", "fields": [{ "id": "a", "kind": "text", "label": "A" }] }] }"#
        try more.write(to: directory.appendingPathComponent("more.json"), atomically: true, encoding: .utf8)
        let result = try await Self.fieldsheet(["lint", PackagePaths.file("Schema/forms/filter-jobs.json"), directory.appendingPathComponent("more.json").path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("more.json:1:"))
        #expect(result.stdout.contains("error[popover-stacked] $.parent"))
    }

    @Test func missingFilesAndBrokenJSONExitNonZeroWithoutACrash() async throws {
        let result = try await Self.fieldsheet(["lint", "/nowhere/form.json", PackagePaths.file("Package.swift")])
        #expect(result.status == 1)
        #expect(result.stdout.contains("/nowhere/form.json: error[file]"))
        #expect(result.stdout.contains("Package.swift:1:1: error[json-syntax]"))
    }

    @Test func helpDescribesTheCommands() async throws {
        let client = try await Self.fieldsheet(["--help"])
        #expect(client.status == 0)
        #expect(client.stdout.contains("lint"))
        #expect(client.stdout.contains("preview"))
        let server = try await Subprocess.run(PackagePaths.debugProduct("fieldsheet-server"), ["--help"])
        #expect(server.status == 0)
        #expect(server.stdout.contains("fieldsheet-server"))
    }

    @Test func previewShowsBothSizeClasses() async throws {
        let form = PackagePaths.file("Schema/forms/follow-up-job.json")
        let result = try await Self.fieldsheet(["preview", "--summary", form])
        #expect(result.status == 0)
        #expect(result.stdout.contains("on 120×40, regular width → form sheet"))
        #expect(result.stdout.contains("on 80×24, compact width → full screen"))
        let bad = try await Self.fieldsheet(["preview", "--size", "wide", form])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("'wide' is not a terminal size"))
    }
}

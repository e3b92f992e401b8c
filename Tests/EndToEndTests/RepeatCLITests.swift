import FieldSheetTesting
import Foundation
import Testing

/// `fieldsheet fill` with a repeat group: line mode asks for each instance and whether to add another;
/// `--set 'defects[2].severity=high'` and `--remove 'defects[1]'` script it.
struct RepeatCLITests {
    static func home() async throws -> CLIHome {
        let cli = CLIHome()
        let imported = try await cli.run("forms", "import", PackagePaths.file("Schema/forms/defect-inspection.json"))
        #expect(imported.status == 0, "\(imported.output)")
        return cli
    }

    @Test func lineModeAsksForEachInstanceAndWhetherToAddAnother() async throws {
        let cli = try await Self.home()
        // Site; today's date kept; no next visit; add a defect: Roof, High, the 2nd offered action, no cost,
        // why it cannot wait, no photo; no other defect.
        let fill = try await cli.run(["fill", "defect-inspection"], stdin: "Depot\n\n\ny\nRoof\n3\n2\n\nWater in the panel\n\nn\n")
        #expect(fill.status == 0, "\(fill.output)")
        #expect(fill.stderr.contains("Add a defect? [y/N]: "))
        #expect(fill.stderr.contains("Add another defect? [y/N]: "))
        #expect(fill.stderr.contains("Defect 1 › Where (required)"))
        #expect(fill.stderr.contains("  2) Close the site"), "the actions offered are those of a high severity")
        #expect(!fill.stderr.contains("Schedule a repair"))
        let shown = try await cli.run("show", try #require(CLIHome.recordID(fill))).stdout
        #expect(shown.contains("Action: Close the site"), "\(shown)")
        #expect(shown.contains("Defects found (computed): 1"), "\(shown)")
    }

    @Test func setAddressesInstancesAndRemoveTombstonesThem() async throws {
        let cli = try await Self.home()
        let fill = try await cli.run(["fill", "defect-inspection", "--set", "site=Depot",
                                "--set", "defects[1].location=Roof", "--set", "defects[1].severity=low", "--set", "defects[1].action=note",
                                "--set", "defects[2].location=Gate", "--set", "defects[2].severity=high", "--set", "defects[2].action=repair_now",
                                "--set", "defects[2].cost=1500", "--complete"])
        #expect(fill.status == 2, "completion refused: \(fill.output)")
        #expect(fill.stderr.contains("defects[2].urgent_note (Defect 2 › Why it cannot wait): Required"), "\(fill.output)")
        let id = try #require(CLIHome.recordID(fill))
        let resume = try await cli.run(["resume", id, "--remove", "defects[2]", "--complete"])
        #expect(resume.status == 0, "\(resume.output)")
        let shown = try await cli.run("show", id).stdout
        #expect(shown.contains("Defects: 1 defect"), "\(shown)")
        #expect(!shown.contains("Gate"))
        #expect(try await cli.run(["show", id, "--json"]).stdout.contains("/@removed\" : {\n      \"boolean\" : true"))
    }

    @Test(arguments: [
        (["--set", "defects[2].location=x"], "no defect 2"),
        (["--set", "defects[1].nope=x"], "no field \"nope\" in the repeat \"defects\""),
        (["--set", "defect[1].location=x"], "no repeat \"defect\""),
        (["--set", "defects.location=x"], "not a field address"),
        (["--set", "total_cost=3"], "computed from other answers"),
        (["--remove", "defects[1].location"], "names a field"),
        (["--remove", "defects[1]"], "no defect 1"),
    ])
    func badAddressesAreRefusedAndNothingIsSaved(arguments: [String], message: String) async throws {
        let cli = try await Self.home()
        let fill = try await cli.run(["fill", "defect-inspection", "--set", "site=Depot"] + arguments + ["--dismiss"])
        #expect(fill.status == 1, "\(fill.output)")
        #expect(fill.stderr.contains(message), "\(fill.output)")
        #expect(try await cli.run("records").stdout.isEmpty)
    }
}

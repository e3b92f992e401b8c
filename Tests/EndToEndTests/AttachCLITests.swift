import FieldSheetTesting
import Foundation
import Testing

/// `fieldsheet fill|resume|edit … --attach FIELD=PATH`: the file is copied into the home under its hash with
/// the record's answer, repeats are addressed as --set addresses them, and a full disk refuses cleanly.
struct AttachCLITests {
    static func home() async throws -> CLIHome {
        let cli = CLIHome()
        let form = cli.directory.write("damage-report.json", SampleForms.damageReportJSON(maxPhotoBytes: 20 << 20))
        let imported = try await cli.run("forms", "import", form)
        #expect(imported.status == 0, "\(imported.output)")
        return cli
    }

    static func photo(_ cli: CLIHome, _ name: String, size: Int, seed: UInt64) -> String {
        let path = cli.directory.file(name)
        SampleForms.writeRandomFile(path, size: size, seed: seed)
        return path
    }

    func blobs(_ cli: CLIHome) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: cli.home + "/attachments")) ?? []).sorted()
    }

    @Test func fillAttachesPhotosByAddressAndShowAndStatusReportThem() async throws {
        let cli = try await Self.home()
        let photo = Self.photo(cli, "IMG_0042.jpg", size: 48_213, seed: 42)
        let crack = Self.photo(cli, "crack.png", size: 2048, seed: 43)
        let fill = try await cli.run(["fill", "damage-report", "--set", "site=Depot", "--attach", "photo=\(photo)",
                                "--set", "defects[1].note=Crack", "--attach", "defects[1].defect_photo=\(crack)", "--complete"])
        #expect(fill.status == 0, "\(fill.output)")
        #expect(fill.stderr.contains("photo: attached IMG_0042.jpg (image/jpeg, 47 KB)"), "\(fill.output)")
        #expect(fill.stderr.contains("defects[1].defect_photo: attached crack.png (image/png, 2.0 KB)"), "\(fill.output)")
        #expect(blobs(cli).count == 2)
        let id = try #require(CLIHome.recordID(fill))
        let shown = try await cli.run("show", id).stdout
        #expect(shown.contains("Photo: IMG_0042.jpg (image/jpeg, 47 KB)"), "\(shown)")
        let status = try await cli.run("status").stdout
        #expect(status.contains("attachments to upload: 2 (49 KB)"), "\(status)")
    }

    @Test func resumeReplacesAPhotoAndCancelDiscardTakesTheNewFileAway() async throws {
        let cli = try await Self.home()
        let first = Self.photo(cli, "a.jpg", size: 1000, seed: 1)
        let fill = try await cli.run(["fill", "damage-report", "--set", "site=Depot", "--attach", "photo=\(first)", "--dismiss"])
        #expect(fill.status == 3, "\(fill.output)")
        let id = try #require(CLIHome.recordID(fill))
        let kept = blobs(cli)
        #expect(kept.count == 1)
        let second = Self.photo(cli, "b.jpg", size: 2000, seed: 2)
        let discard = try await cli.run(["resume", id, "--attach", "photo=\(second)", "--cancel", "--discard"])
        #expect(discard.status == 4, "\(discard.output)")
        #expect(blobs(cli) == kept)
        #expect(try await cli.run("show", id).stdout.contains("a.jpg (image/jpeg, 1000 bytes)"))
    }

    @Test func lineModeAttachesTheFileWhosePathIsTyped() async throws {
        let cli = try await Self.home()
        let photo = Self.photo(cli, "a.jpg", size: 1000, seed: 8)
        // Site; a path that is not there, then the photo; no voice note, no document, no defect.
        let fill = try await cli.run(["fill", "damage-report"], stdin: "Depot\n/nonexistent/b.jpg\n\(photo)\n\n\nn\n")
        #expect(fill.status == 0, "\(fill.output)")
        #expect(fill.stderr.contains("Type the path of the file to attach."), "\(fill.output)")
        #expect(fill.stderr.contains("! There is no file /nonexistent/b.jpg"), "\(fill.output)")
        #expect(fill.stderr.contains("attached a.jpg (image/jpeg, 1000 bytes)"), "\(fill.output)")
        #expect(blobs(cli).count == 1)
    }

    @Test(arguments: [
        (["--attach", "site=PHOTO"], "takes no file"),
        (["--attach", "photo=/nonexistent/x.jpg"], "There is no file /nonexistent/x.jpg"),
        (["--attach", "defects[2].defect_photo=PHOTO"], "no defect 2"),
        (["--attach", "photo"], "--attach takes FIELD=PATH"),
        (["--set", "photo=x.jpg"], "use --attach photo=PATH"),
        (["--attach", "photo=TEXT"], "text/plain"),
    ])
    func badAttachmentsAreRefusedAndNothingIsSaved(arguments: [String], message: String) async throws {
        let cli = try await Self.home()
        let photo = Self.photo(cli, "p.jpg", size: 100, seed: 5)
        let text = Self.photo(cli, "notes.txt", size: 100, seed: 6)
        let resolved = arguments.map { $0.replacingOccurrences(of: "PHOTO", with: photo).replacingOccurrences(of: "TEXT", with: text) }
        let fill = try await cli.run(["fill", "damage-report", "--set", "site=Depot"] + resolved + ["--dismiss"])
        #expect(fill.status != 0 && fill.status != 3, "\(fill.output)")
        #expect(fill.stderr.contains(message), "\(fill.output)")
        #expect(blobs(cli).isEmpty)
        #expect(try await cli.run("records").stdout.split(separator: "\n").count <= 1, "no record was kept")
    }

    /// The disk fills up while the photo is copied: `ulimit -f` caps the size of any file the process writes
    /// (the kernel refuses the write past it with EFBIG, as a full disk refuses with ENOSPC).
    @Test func aFullDiskRefusesTheAttachCleanly() async throws {
        let cli = try await Self.home()
        let draft = try await cli.run(["fill", "damage-report", "--set", "site=Depot", "--dismiss"])
        let id = try #require(CLIHome.recordID(draft))
        let before = try await cli.run("show", id, "--json").stdout
        let big = Self.photo(cli, "big.jpg", size: 8 << 20, seed: 9)
        // 4 MiB (ulimit counts 1 KiB blocks in bash): the database stays well below it, the photo does not.
        let script = "trap '' XFSZ; ulimit -f 4096; exec \"$0\" --home \"$1\" resume \"$2\" --attach \"photo=$3\" --dismiss"
        let result = try await Subprocess.run("/bin/bash", ["-c", script, CLIHome.binary, cli.home, id, big], stdin: "", timeout: 60)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("full"), "\(result.output)")
        #expect(result.stderr.contains("Nothing was attached"), "\(result.output)")
        #expect(blobs(cli).isEmpty, "no temporary or partial file is left")
        #expect(try await cli.run("show", id, "--json").stdout == before)
        // With room again, the same attach works.
        let again = try await cli.run(["resume", id, "--attach", "photo=\(big)", "--dismiss"])
        #expect(again.status == 3, "\(again.output)")
        #expect(blobs(cli).count == 1)
    }
}

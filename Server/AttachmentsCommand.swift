import ArgumentParser
import Foundation
import FormModel
import ServerCore
import ServerStorage

/// How old an unreferenced attachment or an abandoned upload must be before it is removed; shared by `serve`
/// and `attachments prune`.
struct AttachmentAgeOptions: ParsableArguments {
    @Option(
        name: .customLong("unreferenced-attachment-age"),
        help: ArgumentHelp(
            "Hours an attachment that no record value and no conflict-log entry references is kept: counted from its upload and from when a sweep first found it unreferenced (a push in flight may be about to reference it).",
            valueName: "hours"))
    var unreferencedAge = AttachmentCollectionPolicy.defaultUnreferencedAge / 3600

    @Option(
        name: .customLong("abandoned-upload-age"),
        help: ArgumentHelp("Hours an upload that never completed is kept after its last received byte.", valueName: "hours"))
    var abandonedUploadAge = AttachmentCollectionPolicy.defaultAbandonedUploadAge / 3600

    func validate() throws {
        for (name, value) in [("--unreferenced-attachment-age", unreferencedAge), ("--abandoned-upload-age", abandonedUploadAge)] {
            guard value >= 0, value <= 24 * 365 * 10 else { throw ValidationError("\(name) must be a number of hours from 0 to 87600; it is \(value).") }
        }
    }

    var policy: AttachmentCollectionPolicy {
        AttachmentCollectionPolicy(unreferencedAge: unreferencedAge * 3600, abandonedUploadAge: abandonedUploadAge * 3600)
    }
}

extension FieldSheetServerCommand {
    /// `attachments prune [--dry-run]`.
    struct Attachments: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Manage stored attachments.", subcommands: [Prune.self])

        struct Prune: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Remove attachments nothing keeps any more, and uploads abandoned halfway.",
                discussion: """
                    An attachment stays while a record's current value or an entry of the conflict log (open or \
                    resolved) references it. One referenced by neither goes once it was uploaded, and first found \
                    unreferenced by a sweep, at least --unreferenced-attachment-age hours ago; an upload that never \
                    completed goes --abandoned-upload-age hours after its last byte. `serve` sweeps by itself \
                    (--attachment-sweep-interval); this does one sweep now, safely beside running servers. \
                    Prints one line per attachment removed (with --dry-run: that would be removed): \
                    "removed|would remove <project> <sha256> <bytes> unreferenced|abandoned-upload", then a summary. \
                    Exit status: 0 the sweep ran (whether or not it removed anything); 1 it failed (the reason is on \
                    stderr); 64 the command line was wrong.
                    """)
            @OptionGroup var data: DataOptions
            @OptionGroup var ages: AttachmentAgeOptions
            @Flag(name: .customLong("dry-run"), help: "Only say what would be removed; change nothing.") var dryRun = false

            func run() async throws {
                try await reportingFailures {
                    let (sweep, names) = try await data.withStorage { storage in
                        let sweep = try await storage.sweepAttachments(policy: ages.policy, now: Date(), dryRun: dryRun)
                        let names = Dictionary(try await storage.projects().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
                        return (sweep, names)
                    }
                    for item in sweep.collected {
                        let project = names[item.key.projectID] ?? String(item.key.projectID)
                        print("\(dryRun ? "would remove" : "removed") \(project) \(item.key.sha256) \(item.bytes) \(item.reason == .unreferenced ? "unreferenced" : "abandoned-upload")")
                    }
                    print(Self.summary(sweep, ages: ages))
                }
            }

            static func summary(_ sweep: AttachmentSweep, ages: AttachmentAgeOptions) -> String {
                func counted(_ count: Int, _ noun: String, _ bytes: Int64) -> String {
                    "\(count) \(noun)\(count == 1 ? "" : "s") (\(AttachmentReference.formatSize(bytes)))"
                }
                let verb = sweep.dryRun ? "would remove" : "removed"
                var text = "\(verb) \(counted(sweep.count(.unreferenced), "unreferenced attachment", sweep.bytes(.unreferenced))) and "
                    + "\(counted(sweep.count(.abandonedUpload), "abandoned upload", sweep.bytes(.abandonedUpload)))"
                if sweep.waiting > 0 {
                    text += "; kept \(counted(sweep.waiting, "unreferenced attachment", sweep.waitingBytes)) younger than \(ages.unreferencedAge.formatted()) hours"
                    if sweep.dryRun { text += " (a sweep that is not a dry run starts their clock when it finds them unreferenced)" }
                }
                return text + "."
            }
        }
    }
}

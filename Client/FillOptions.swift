import ArgumentParser
import FillFlow
import Foundation

/// The options `fill`, `resume` and `edit` share: values to set and how the sheet ends.
struct FillOptions: ParsableArguments {
    @Option(name: .customLong("set"), help: ArgumentHelp("Answer a field, e.g. --set site=\"B2 basement\" or --set 'defects[2].severity=high' (repeatable; the number one past the last instance adds one). Choices by value, label or number.", valueName: "field=value"))
    var assignments: [String] = []

    @Option(name: .customLong("attach"), help: ArgumentHelp("Attach a file to a photo, audio or file field, e.g. --attach photo=IMG_0042.jpg or --attach 'defects[2].photo=crack.jpg' (repeatable; addressed like --set). The file is copied into the device home before the command goes on; its media type comes from its extension.", valueName: "field=path"))
    var attachments: [String] = []

    @Option(name: .customLong("remove"), help: ArgumentHelp("Remove a repeat instance, e.g. --remove 'defects[2]' (repeatable; instances count from 1, after the --set additions).", valueName: "group[n]"))
    var removals: [String] = []

    @Flag(help: "Press the completion button: submit when valid (exit 0), else list every field error and keep the draft (exit 2).")
    var complete = false

    @Flag(help: "Dismiss the sheet (Esc): keep everything as a draft (exit 3).")
    var dismiss = false

    @Flag(help: "Press Cancel: closes when nothing was typed (exit 4); after typing it needs --discard, otherwise the draft is kept (exit 3).")
    var cancel = false

    @Flag(help: "With --cancel: confirm Discard Changes, reverting what this sheet changed (exit 4).")
    var discard = false

    @Option(help: ArgumentHelp("Show the form in one of its languages for this sheet: its code (fr), its name (Français) or as the form lists it (\"Français (fr)\"); the device's language otherwise, else the form's default.", valueName: "language"))
    var language: String?

    @OptionGroup var interface: InterfaceOptions

    func validate() throws {
        if [complete, dismiss, cancel].filter({ $0 }).count > 1 {
            throw ValidationError("Give only one of --complete, --dismiss and --cancel.")
        }
        if discard && !cancel {
            throw ValidationError("--discard confirms a Cancel; use it together with --cancel.")
        }
        _ = try fieldAssignments()
        _ = try fieldAttachments()
    }

    /// The `--attach FIELD=PATH` options, in order.
    func fieldAttachments() throws -> [FieldAssignment] {
        try attachments.map { argument in
            guard let attachment = FieldAssignment(argument: argument), !attachment.input.isEmpty else {
                throw ValidationError("--attach takes FIELD=PATH, like --attach photo=IMG_0042.jpg; got \"\(argument)\".")
            }
            return attachment
        }
    }

    func fieldAssignments() throws -> [FieldAssignment] {
        try assignments.map { argument in
            guard let assignment = FieldAssignment(argument: argument) else {
                throw ValidationError("--set takes FIELD=VALUE, like --set site=\"B2 basement\"; got \"\(argument)\".")
            }
            return assignment
        }
    }

    /// The action asked for; line mode when none.
    var action: FillAction {
        if complete { return .complete }
        if dismiss { return .dismiss }
        if cancel { return .cancel(discard: discard) }
        return .lineMode
    }
}

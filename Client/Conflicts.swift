import ArgumentParser
import DraftStore
import FormModel
import Foundation

extension FieldSheetCommand {
    /// `fieldsheet conflicts [--all]`.
    struct Conflicts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List conflicts waiting for you (--all: the whole conflict log): record, field, both values and who wrote them.")

        @OptionGroup var home: HomeOptions

        @Flag(help: "Show every logged conflict, also those a policy decided or that were resolved.")
        var all = false

        func run() async throws {
            try await reportingErrors {
                let store = try home.openStore()
                let conflicts = try await store.conflicts(openOnly: !all)
                if conflicts.isEmpty {
                    print(all ? "no conflicts logged" : "no open conflicts")
                    return
                }
                for conflict in conflicts {
                    var field: FieldDefinition?
                    var place: String?
                    if let record = try await store.record(conflict.recordID), let form = try? await store.form(record.form) {
                        field = FormFields(form: form).definition(ofKey: conflict.fieldID)
                        // "Defect 2 › Severity": the instance and the field, as the person knows them.
                        place = FormState(form: form, answers: record.answers).describe(conflict.fieldID)
                    }
                    let state = conflict.isOpen ? "open" : conflict.policy == "manual" ? "resolved" : conflict.policy == "rejected" ? "refused by the server" : "decided by \(conflict.policy)"
                    print("\(conflict.recordID.lowercased)  \(conflict.fieldID)\(place.map { " (\($0))" } ?? "")  \(state)")
                    print("  mine:   \(Self.show(conflict.mine, field))  — written on \(conflict.mineDevice ?? "this device")")
                    print("  theirs: \(Self.show(conflict.theirs, field))  — written on \(conflict.theirsDevice ?? "the server")")
                    if let reason = conflict.reason { print("  why:    \(reason)") }
                }
                if !all {
                    print("resolve with: fieldsheet resolve RECORD FIELD (--mine | --theirs | --value V), then fieldsheet sync")
                }
            }
        }

        static func show(_ value: AnswerValue?, _ field: FieldDefinition?) -> String {
            value.map { "\"\($0.display(for: field))\"" } ?? "(empty)"
        }
    }

    /// `fieldsheet resolve RECORD FIELD (--mine | --theirs | --value V)`.
    struct Resolve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Settle an open conflict. The chosen value is saved as an ordinary edit and sent at the next sync.")

        @OptionGroup var home: HomeOptions
        @Argument(help: "The record id.") var record: String
        @Argument(help: "The field id.") var field: String
        @Flag(help: "Keep the value typed on this device.") var mine = false
        @Flag(help: "Keep the value now on the server.") var theirs = false
        @Option(help: "Use this value instead (typed as in a fill; empty clears the field).") var value: String?

        func validate() throws {
            guard [mine, theirs, value != nil].filter({ $0 }).count == 1 else {
                throw ValidationError("Choose exactly one of --mine, --theirs or --value V.")
            }
        }

        func run() async throws {
            try await reportingErrors {
                let store = try home.openStore()
                let id = try recordID(record)
                let choice: ConflictChoice
                if mine {
                    choice = .mine
                } else if theirs {
                    choice = .theirs
                } else {
                    guard let stored = try await store.record(id) else {
                        throw DraftStoreError(.unknownRecord, "There is no record \(record) on this device.")
                    }
                    let form = try await store.form(stored.form)
                    guard let definition = FormFields(form: form).definition(ofKey: field) else {
                        throw DraftStoreError(.unknownField, "The form \(form.id) has no field \"\(field)\".")
                    }
                    choice = .value(AnswerValue.parse(value ?? "", for: definition))
                }
                let chosen = try await store.resolveConflict(record: id, field: field, choice: choice)
                print("resolved \(field) of \(id.lowercased): \(chosen.map { "\"\($0.display())\"" } ?? "(empty)"); run `fieldsheet sync` to send it")
            }
        }
    }
}

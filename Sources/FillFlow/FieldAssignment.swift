import DraftStore
import Foundation
import FormModel

/// One `--set FIELD=VALUE` from the command line.
public struct FieldAssignment: Sendable, Hashable {
    public var field: String
    /// The text as typed; parsed for the field's kind when applied.
    public var input: String

    /// Parses `FIELD=VALUE`; nil when there is no `=` or no field name.
    public init?(argument: String) {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else { return nil }
        field = String(argument[..<equals])
        input = String(argument[argument.index(after: equals)...])
    }

    public init(field: String, input: String) {
        self.field = field
        self.input = input
    }

    /// Checks that every assignment names a field of `form` that takes an answer (through the repeats that hold
    /// it: `defects[2].severity`), every removal an instance of a repeat, and every attachment a photo, audio or
    /// file field and a readable file, before anything is saved.
    public static func check(_ assignments: [FieldAssignment], removals: [String] = [], attachments: [FieldAssignment] = [], against form: FormDefinition) throws {
        let fields = FormFields(form: form)
        let attached = Dictionary(attachments.map { ($0.field, $0.input) }, uniquingKeysWith: { first, _ in first })
        for (text, isRemoval) in assignments.map({ ($0.field, false) }) + removals.map({ ($0, true) }) + attachments.map({ ($0.field, false) }) {
            let path = attached[text]
            let option = isRemoval ? "--remove \(text)" : path.map { "--attach \(text)=\($0)" } ?? "--set \(text)=…"
            let address: FieldAddress
            do { address = try FieldAddress(text) } catch {
                throw DraftStoreError(.unknownField, "\(error.description) (in \(option)). Nothing was saved.")
            }
            let groups = address.steps.map(\.group)
            for (index, group) in groups.enumerated() {
                guard fields.byID[group]?.kind == .repeat, fields.repeatChain(group) == Array(groups[..<index]) else {
                    let repeats = fields.order.filter { fields.byID[$0]?.kind == .repeat }
                    throw DraftStoreError(.unknownInstance, "The form \(form.id) has no repeat \"\(group)\" there (in \(option)). Its repeats are: \(repeats.isEmpty ? "none" : repeats.joined(separator: ", ")). Nothing was saved.")
                }
            }
            guard let name = address.field else {
                if isRemoval, !groups.isEmpty { continue }
                throw DraftStoreError(.unknownField, "\(option) names \(isRemoval ? "no instance; write group[n], like defects[2]" : "an instance, not a field; write \(text).FIELD=VALUE"). Nothing was saved.")
            }
            if isRemoval {
                throw DraftStoreError(.unknownInstance, "\(option) names a field; name an instance, like defects[2]. Nothing was saved.")
            }
            let here = groups.last.flatMap { fields.byID[$0]?.fields } ?? form.allFields
            guard let field = here.first(where: { $0.id == name }) else {
                let names = here.filter(\.isEditable).map(\.id)
                throw DraftStoreError(.unknownField,
                    "The form \(form.id) has no field \"\(name)\"\(groups.last.map { " in the repeat \"\($0)\"" } ?? "") (in \(option)). Its fields are: \(names.joined(separator: ", ")). Nothing was saved.")
            }
            guard field.isEditable else {
                let why = field.kind == .repeat ? "is a repeat; address its instances, like \(field.id)[1].FIELD=VALUE" : field.isComputed ? "is computed from other answers and takes no answer" : "is a note and takes no answer"
                throw DraftStoreError(.readOnlyField, "The field \"\(field.id)\" of form \(form.id) \(why). Nothing was saved.")
            }
            if let path {
                try checkAttachment(field, path: path, option: option, form: form)
            } else if field.kind.takesAttachment, assignments.contains(where: { $0.field == text }) {
                throw DraftStoreError(.wrongType, "The field \"\(field.id)\" (\(field.label)) of form \(form.id) takes a file, not a typed value: use --attach \(text)=PATH (in \(option)). Nothing was saved.")
            }
        }
    }

    /// The field of `--attach` takes files, and the file is there and readable.
    static func checkAttachment(_ field: FieldDefinition, path: String, option: String, form: FormDefinition) throws {
        guard field.kind.takesAttachment else {
            let attachable = form.everyField.filter(\.kind.takesAttachment).map(\.id)
            throw DraftStoreError(.wrongType, "The field \"\(field.id)\" (\(field.label)) of form \(form.id) is a \(field.kind.rawValue) field and takes no file (in \(option)); give it a value with --set. Its file fields are: \(attachable.isEmpty ? "none" : attachable.joined(separator: ", ")). Nothing was saved.")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw DraftStoreError(.attachmentUnreadable, "There is no file \(path) (in \(option)). Give the path of an existing file. Nothing was saved.")
        }
        guard !isDirectory.boolValue, FileManager.default.isReadableFile(atPath: path) else {
            throw DraftStoreError(.attachmentUnreadable, "\(path) is \(isDirectory.boolValue ? "a directory" : "not readable") (in \(option)); give the path of a file you may read. Nothing was saved.")
        }
    }
}

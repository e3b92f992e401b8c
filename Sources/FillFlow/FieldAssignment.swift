import DraftStore
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
    /// it: `defects[2].severity`), and every removal an instance of a repeat, before anything is saved.
    public static func check(_ assignments: [FieldAssignment], removals: [String] = [], against form: FormDefinition) throws {
        let fields = FormFields(form: form)
        for (text, isRemoval) in assignments.map({ ($0.field, false) }) + removals.map({ ($0, true) }) {
            let option = isRemoval ? "--remove \(text)" : "--set \(text)=…"
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
        }
    }
}

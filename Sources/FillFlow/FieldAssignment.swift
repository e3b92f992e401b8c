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

    /// Checks that every assignment names a field of `form` that takes an answer, before anything is saved.
    public static func check(_ assignments: [FieldAssignment], against form: FormDefinition) throws {
        let names = form.allFields.filter(\.kind.takesAnswer).map(\.id)
        let fields = Dictionary(form.allFields.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for assignment in assignments {
            guard let field = fields[assignment.field] else {
                throw DraftStoreError(.unknownField,
                    "The form \(form.id) has no field \"\(assignment.field)\" (in --set \(assignment.field)=…). Its fields are: \(names.joined(separator: ", ")). Nothing was saved.")
            }
            guard field.kind.takesAnswer else {
                throw DraftStoreError(.readOnlyField, "The field \"\(field.id)\" of form \(form.id) is a note and takes no answer. Nothing was saved.")
            }
        }
    }
}

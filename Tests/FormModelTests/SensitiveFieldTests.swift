import Foundation
import Testing
@testable import FormModel

/// `sensitive` fields: the definition reads and writes the flag, the loader refuses it where a sealed answer
/// cannot work, and validation treats a sealed answer as present without reading it.
struct SensitiveFieldTests {
    func errors(_ fields: String) -> [Finding] {
        Fixtures.load(Fixtures.formJSON(fields: fields)).findings.filter { $0.severity == .error }
    }

    @Test func aTypedAnswerMayBeSensitiveAndTheFlagRoundTrips() throws {
        let fields = #"[{ "id": "name", "kind": "text", "label": "Name" }, { "id": "hiv", "kind": "text", "label": "HIV status", "sensitive": true, "constraint": "string-length(.) < 200" },"#
            + #" { "id": "g", "kind": "repeat", "label": "G", "fields": [{ "id": "income", "kind": "integer", "label": "Income", "sensitive": true }] }]"#
        #expect(errors(fields).isEmpty, "\(errors(fields))")
        let field = FieldDefinition(id: "hiv", kind: .boolean, label: "HIV", sensitive: true)
        let data = try JSONEncoder().encode(field)
        #expect(String(decoding: data, as: UTF8.self).contains("\"sensitive\":true"))
        #expect(try JSONDecoder().decode(FieldDefinition.self, from: data).sensitive)
        #expect(!String(decoding: try JSONEncoder().encode(FieldDefinition(id: "a", kind: .text, label: "A")), as: UTF8.self).contains("sensitive"))
    }

    @Test(arguments: [
        (#"[{ "id": "a", "kind": "integer", "label": "A", "sensitive": true }, { "id": "b", "kind": "integer", "label": "B", "calculation": "a + 1" }]"#,
         "sensitive-read", "$.pages[0].fields[1].calculation"),
        (#"[{ "id": "a", "kind": "text", "label": "A", "sensitive": true }, { "id": "b", "kind": "text", "label": "B", "relevant": "a != ''" }]"#,
         "sensitive-read", "$.pages[0].fields[1].relevant"),
        (#"[{ "id": "a", "kind": "text", "label": "A", "sensitive": true }, { "id": "b", "kind": "note", "label": "You said ${a}" }]"#,
         "sensitive-read", "$.pages[0].fields[1].label"),
        (#"[{ "id": "n", "kind": "integer", "label": "N", "sensitive": true }, { "id": "g", "kind": "repeat", "label": "G", "countFrom": "n", "fields": [{ "id": "x", "kind": "text", "label": "X" }] }]"#,
         "sensitive-read", "$.pages[0].fields[1].countFrom"),
        (#"[{ "id": "a", "kind": "integer", "label": "A", "calculation": "1 + 1", "sensitive": true }]"#, "sensitive-not-an-answer", "$.pages[0].fields[0].sensitive"),
        (#"[{ "id": "g", "kind": "repeat", "label": "G", "sensitive": true, "fields": [{ "id": "x", "kind": "text", "label": "X" }] }]"#,
         "sensitive-not-an-answer", "$.pages[0].fields[0].sensitive"),
        (#"[{ "id": "p", "kind": "photo", "label": "P", "sensitive": true }]"#, "sensitive-attachment", "$.pages[0].fields[0].sensitive"),
    ])
    func aSensitiveFieldIsRefusedWhereItsSealedAnswerCannotWork(fields: String, rule: String, path: String) {
        let found = errors(fields)
        #expect(found.map(\.rule) == [rule], "\(found)")
        #expect(found.first?.path.description == path, "\(found)")
    }

    @Test func aSealedAnswerCountsAsPresentAndIsNotCheckedOnTheServer() {
        let form = FormDefinition(id: "f", version: 1, title: "F", completionLabel: "Save", pages: [FormPage(id: "p", fields: [
            FieldDefinition(id: "income", kind: .integer, label: "Income", required: true, max: 10, constraint: ". < 5", sensitive: true),
        ])])
        let validator = FormValidator(form: form)
        let sealed = AnswerValue.sealed(SealedAnswer(key: "k1", enc: "ZW5j", ct: "Y3Q="))
        #expect(validator.validate(["income": sealed]).issues.isEmpty)
        #expect(validator.validate([:]).issues.map(\.code) == [.required])
        #expect(validator.draftIssue("income", sealed) == nil)
        #expect(sealed.display() == "sensitive — encrypted")
    }
}

import Foundation
import Testing
@testable import FormModel

/// The loader's findings for expressions, repeats and calculations, in the linter's finding format.
struct ExpressionLintTests {
    func findings(_ fields: String) -> [Finding] {
        Fixtures.load(Fixtures.formJSON(fields: fields)).findings
    }

    @Test func theDefectInspectionExampleIsClean() {
        #expect(FormLinter().lint(files: [Fixtures.path("Schema/forms/defect-inspection.json")]).isEmpty)
    }

    @Test(arguments: [
        (#"[{ "id": "a", "kind": "integer", "label": "A", "calculation": "b + 1" }]"#, "calculation-unknown-field", "$.pages[0].fields[0].calculation", "names \"b\""),
        (#"[{ "id": "a", "kind": "integer", "label": "A", "constraint": ". > " }]"#, "constraint-syntax", "$.pages[0].fields[0].constraint", "does not parse"),
        (#"[{ "id": "a", "kind": "text", "label": "A" }, { "id": "b", "kind": "integer", "label": "B", "calculation": "a * 2" }]"#,
         "expression-type-mismatch", "$.pages[0].fields[1].calculation", "arithmetic needs numbers"),
        (#"[{ "id": "a", "kind": "integer", "label": "A" }, { "id": "b", "kind": "boolean", "label": "B", "relevant": "a > 'high'" }]"#,
         "expression-type-mismatch", "$.pages[0].fields[1].relevant", "no order between them"),
        (#"[{ "id": "a", "kind": "integer", "label": "A", "calculation": "concat('x', 1)" }]"#, "expression-type-mismatch", "$.pages[0].fields[0].calculation", "gives text"),
        (#"[{ "id": "a", "kind": "integer", "label": "A", "calculation": "b" }, { "id": "b", "kind": "integer", "label": "B", "calculation": "a + 1" }]"#,
         "calculation-cycle", "$.pages[0].fields[0].calculation", "a → b → a"),
        (#"[{ "id": "g", "kind": "repeat", "label": "G", "fields": [{ "id": "x", "kind": "integer", "label": "X" }] }, { "id": "t", "kind": "integer", "label": "T", "calculation": "x + 1" }]"#,
         "repeat-scope", "$.pages[0].fields[1].calculation", "from outside that repeat"),
        (#"[{ "id": "g", "kind": "repeat", "label": "G", "fields": [{ "id": "x", "kind": "text", "label": "X" }] }, { "id": "t", "kind": "decimal", "label": "T", "calculation": "sum(g.x)" }]"#,
         "expression-type-mismatch", "$.pages[0].fields[1].calculation", "sum() needs numbers"),
        (#"[{ "id": "g", "kind": "repeat", "label": "G", "fields": [{ "id": "x", "kind": "text", "label": "X" }] }, { "id": "x2", "kind": "text", "label": "T", "calculation": "g.y" }]"#,
         "calculation-unknown-field", "$.pages[0].fields[1].calculation", "not a field of the repeat"),
        (#"[{ "id": "c", "kind": "singleChoice", "label": "C", "choiceFilter": "choice.level == 'x'", "choices": [{ "value": "a", "label": "A" }] }]"#,
         "choice-filter-unknown-property", "$.pages[0].fields[0].choiceFilter", "property \"level\""),
        (#"[{ "id": "g", "kind": "repeat", "label": "G", "fields": [{ "id": "g", "kind": "text", "label": "X" }] }]"#,
         "duplicate-field-id", "$.pages[0].fields[0].fields[0].id", "already used"),
        (#"[{ "id": "g", "kind": "repeat", "label": "G", "countFrom": "n", "fields": [{ "id": "x", "kind": "text", "label": "X" }] }]"#,
         "count-from-invalid", "$.pages[0].fields[0].countFrom", "not an integer or calculate field"),
        (#"[{ "id": "a", "kind": "text", "label": "A", "minCount": 1 }]"#, "option-not-for-kind", "$.pages[0].fields[0].minCount", "only to repeat"),
        (#"[{ "id": "a", "kind": "date", "label": "A", "default": { "expression": "today(" } }]"#, "default-syntax", "$.pages[0].fields[0].default.expression", "does not parse"),
        (#"[{ "id": "a", "kind": "integer", "label": "A", "relevant": ". > 1" }]"#, "relevance-current-value", "$.pages[0].fields[0].relevant", "only a constraint"),
        (#"[{ "id": "a", "kind": "text", "label": "A", "required": { "expression": "b > 1" } }]"#, "required-unknown-field", "$.pages[0].fields[0].required.expression", "names \"b\""),
        (#"[{ "id": "a", "kind": "text", "label": "A", "required": { "expression": "a >" } }]"#, "required-syntax", "$.pages[0].fields[0].required.expression", "does not parse"),
        (#"[{ "id": "a", "kind": "text", "label": "A", "required": "yes" }]"#, "schema", "$.pages[0].fields[0].required", "must be a boolean or an object"),
        (#"[{ "id": "a", "kind": "note", "label": "A", "required": { "expression": "true" } }]"#, "option-not-for-kind", "$.pages[0].fields[0].required", "cannot be required"),
        (#"[{ "id": "c", "kind": "singleChoice", "label": "C", "choiceFilter": "choice.s == 'x'", "choices": [{ "value": "a", "label": "A", "properties": { "s": "x" } }, { "value": "a", "label": "B", "properties": { "s": "x" } }] }]"#,
         "duplicate-choice", "$.pages[0].fields[0].choices[1].value", "same properties"),
    ])
    func findingsNameTheRuleThePlaceAndTheFix(fields: String, rule: String, path: String, message: String) throws {
        let all = findings(fields)
        let finding = try #require(all.first { $0.rule == rule }, "\(all)")
        #expect(finding.path.description == path)
        #expect(finding.message.contains(message), "\(finding.message)")
        #expect(finding.location != nil)
        #expect(!finding.fix.isEmpty)
    }

    /// `"required": {"expression": …}` round-trips through JSON and requires an answer while it holds.
    @Test func aRequiredConditionLoadsAndRequiresWhileItHolds() throws {
        let result = Fixtures.load(Fixtures.formJSON(fields: #"[{ "id": "age", "kind": "integer", "label": "Age" }, { "id": "guardian", "kind": "text", "label": "Guardian", "required": { "expression": "age < 18" } }]"#))
        let form = try #require(result.loaded?.form, "\(result.findings)")
        let guardian = try #require(form.field("guardian"))
        #expect(guardian.requiredExpression == "age < 18" && !guardian.required)
        let encoded = try JSONEncoder().encode(guardian)
        #expect(String(decoding: encoded, as: UTF8.self).contains(#""required":{"expression":"age < 18"}"#))
        #expect(try JSONDecoder().decode(FieldDefinition.self, from: encoded) == guardian)
        let validator = FormValidator(form: form)
        #expect(validator.validate(["age": .integer(9)]).issues.map(\.code) == [.required])
        #expect(validator.validate(["age": .integer(30)]).issues.isEmpty)
        #expect(validator.validate(field: "guardian", in: ["age": .integer(9)]).map(\.code) == [.required])
    }

    @Test func calculateNeedsACalculationAndARepeatNeedsFields() {
        #expect(findings(#"[{ "id": "a", "kind": "calculate", "label": "A" }]"#).contains { $0.rule == "schema" && $0.message.contains("calculation") })
        #expect(findings(#"[{ "id": "a", "kind": "repeat", "label": "A" }]"#).contains { $0.rule == "schema" && $0.message.contains("fields") })
    }

    @Test func definitionsWithRepeatsRoundTripThroughJSON() throws {
        let form = try RepeatTests.form()
        let decoded = try JSONDecoder().decode(FormDefinition.self, from: JSONEncoder().encode(form))
        #expect(decoded == form)
        #expect(form.field("severity")?.kind == .singleChoice)
        #expect(form.conflictPolicy(for: "defects/abc/severity") == .manual)
        #expect(form.everyField.map(\.id).prefix(5) == ["site", "inspected_on", "next_visit", "defects", "location"])
    }
}

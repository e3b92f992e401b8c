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
         "count-from-invalid", "$.pages[0].fields[0].countFrom", "not an integer field"),
        (#"[{ "id": "a", "kind": "text", "label": "A", "minCount": 1 }]"#, "option-not-for-kind", "$.pages[0].fields[0].minCount", "only to repeat"),
        (#"[{ "id": "a", "kind": "date", "label": "A", "default": { "expression": "today(" } }]"#, "default-syntax", "$.pages[0].fields[0].default.expression", "does not parse"),
        (#"[{ "id": "a", "kind": "integer", "label": "A", "relevant": ". > 1" }]"#, "relevance-current-value", "$.pages[0].fields[0].relevant", "only a constraint"),
    ])
    func findingsNameTheRuleThePlaceAndTheFix(fields: String, rule: String, path: String, message: String) throws {
        let all = findings(fields)
        let finding = try #require(all.first { $0.rule == rule }, "\(all)")
        #expect(finding.path.description == path)
        #expect(finding.message.contains(message), "\(finding.message)")
        #expect(finding.location != nil)
        #expect(!finding.fix.isEmpty)
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

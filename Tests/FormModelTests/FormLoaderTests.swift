import Foundation
import Testing
@testable import FormModel

struct FormLoaderTests {
    @Test func everyExampleFormLoadsWithoutFindings() throws {
        #expect(Fixtures.exampleForms.count == 7)
        for file in Fixtures.exampleForms {
            let result = FormLoader().load(contentsOf: file)
            #expect(result.findings.isEmpty, "\(file): \(result.findings)")
            #expect(result.loaded != nil)
        }
    }

    @Test func defaultsAndOptionalPropertiesDecodeToTheirDocumentedValues() throws {
        let result = Fixtures.load(Fixtures.formJSON(fields: #"[{ "id": "a", "kind": "integer", "label": "A", "default": 3 }]"#))
        let form = try #require(result.loaded?.form)
        #expect(form.presentation == .automatic)
        #expect(form.cancelLabel == "Cancel")
        #expect(form.conflictPolicy == .lastWriterWins)
        #expect(form.effectiveTransition == .coverVertical)
        #expect(form.editableAfterSubmit == false)
        #expect(form.field("a")?.defaultValue == .integer(3))
    }

    @Test func aFormRoundTripsThroughCodable() throws {
        let form = try #require(FormLoader().load(contentsOf: Fixtures.path("Schema/forms/site-inspection.json")).loaded?.form)
        let data = try JSONEncoder().encode(form)
        #expect(try JSONDecoder().decode(FormDefinition.self, from: data) == form)
    }

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var fields: String
        var rule: String
        var path: String
        var message: String
        var description: String { name }
    }

    @Test(arguments: [
        Case(name: "duplicate field ids",
             fields: #"[{ "id": "a", "kind": "text", "label": "A" }, { "id": "a", "kind": "integer", "label": "B" }]"#,
             rule: "duplicate-field-id", path: "$.pages[0].fields[1].id", message: "already used at $.pages[0].fields[0]"),
        Case(name: "a field id starting with two underscores",
             fields: #"[{ "id": "__entity", "kind": "text", "label": "A" }]"#,
             rule: "reserved-field-id", path: "$.pages[0].fields[0].id", message: "kept for what the system stores"),
        Case(name: "relevance does not parse",
             fields: #"[{ "id": "a", "kind": "text", "label": "A" }, { "id": "b", "kind": "text", "label": "B", "relevant": "a == 'x' and" }]"#,
             rule: "relevance-syntax", path: "$.pages[0].fields[1].relevant", message: "column 13"),
        Case(name: "relevance names an unknown field",
             fields: #"[{ "id": "a", "kind": "text", "label": "A", "relevant": "prio == 'high'" }]"#,
             rule: "relevance-unknown-field", path: "$.pages[0].fields[0].relevant", message: "\"prio\""),
        Case(name: "relevance cycle",
             fields: #"[{ "id": "a", "kind": "text", "label": "A", "relevant": "b" }, { "id": "b", "kind": "text", "label": "B", "relevant": "c" }, { "id": "c", "kind": "text", "label": "C", "relevant": "a" }]"#,
             rule: "relevance-cycle", path: "$.pages[0].fields[0].relevant", message: "a → b → c → a"),
        Case(name: "a field relevant on itself",
             fields: #"[{ "id": "a", "kind": "text", "label": "A", "relevant": "a != null" }]"#,
             rule: "relevance-cycle", path: "$.pages[0].fields[0].relevant", message: "a → a"),
        Case(name: "min above max",
             fields: #"[{ "id": "a", "kind": "integer", "label": "A", "min": 5, "max": 1 }]"#,
             rule: "range-inverted", path: "$.pages[0].fields[0].min", message: "greater than"),
        Case(name: "choices on a text field",
             fields: #"[{ "id": "a", "kind": "text", "label": "A", "choices": [{ "value": "x", "label": "X" }] }]"#,
             rule: "option-not-for-kind", path: "$.pages[0].fields[0].choices", message: "applies only to singleChoice"),
        Case(name: "duplicate choice values",
             fields: #"[{ "id": "a", "kind": "singleChoice", "label": "A", "choices": [{ "value": "x", "label": "X" }, { "value": "x", "label": "Y" }] }]"#,
             rule: "duplicate-choice", path: "$.pages[0].fields[0].choices[1].value", message: "appears twice"),
        Case(name: "default of the wrong type",
             fields: #"[{ "id": "a", "kind": "integer", "label": "A", "default": "three" }]"#,
             rule: "default-invalid", path: "$.pages[0].fields[0].default", message: "a whole number"),
        Case(name: "default outside the range",
             fields: #"[{ "id": "a", "kind": "integer", "label": "A", "min": 1, "max": 5, "default": 9 }]"#,
             rule: "default-invalid", path: "$.pages[0].fields[0].default", message: "between 1 and 5"),
        Case(name: "default not a choice",
             fields: #"[{ "id": "a", "kind": "singleChoice", "label": "A", "choices": [{ "value": "x", "label": "X" }], "default": "z" }]"#,
             rule: "default-invalid", path: "$.pages[0].fields[0].default", message: "Choose one of: X"),
        Case(name: "invalid pattern",
             fields: #"[{ "id": "a", "kind": "text", "label": "A", "pattern": "([" }]"#,
             rule: "pattern-invalid", path: "$.pages[0].fields[0].pattern", message: "not a valid regular expression"),
    ])
    func semanticErrorsAreFoundWithPathAndLocation(_ example: Case) throws {
        let result = Fixtures.load(Fixtures.formJSON(fields: example.fields))
        #expect(result.loaded == nil, "a form with errors must not load")
        let finding = try #require(result.findings.first { $0.rule == example.rule }, "\(result.findings)")
        #expect(finding.severity == .error)
        #expect(finding.path.description == example.path)
        #expect(finding.message.contains(example.message), "\(finding.message)")
        #expect(finding.location != nil)
        #expect(!finding.fix.isEmpty)
    }

    @Test func theLineAndColumnPointAtTheOffendingValue() throws {
        let json = """
            {
              "id": "job", "version": 1, "title": "T", "completionLabel": "Create",
              "pages": [{ "id": "p", "fields": [
                { "id": "a", "kind": "text", "label": "A" },
                { "id": "a", "kind": "text", "label": "B" }
              ] }]
            }
            """
        let finding = try #require(Fixtures.load(json).findings.first)
        #expect(finding.location == SourceLocation(line: 5, column: 13))
        #expect(finding.description.hasPrefix("test.json:5:13: error[duplicate-field-id] $.pages[0].fields[1].id:"))
    }

    @Test func malformedJSONGivesItsLineAndColumn() throws {
        let result = Fixtures.load("{\n  \"id\": \"x\",\n  \"version\": 1,,\n}")
        let finding = try #require(result.findings.first)
        #expect(result.loaded == nil)
        #expect(finding.rule == "json-syntax")
        #expect(finding.location == SourceLocation(line: 3, column: 16))
    }

    @Test func aMissingOrUnreadableFileIsAFindingNotACrash() throws {
        let result = FormLoader().load(contentsOf: "/nonexistent/form.json")
        #expect(result.loaded == nil)
        #expect(result.findings.first?.rule == "file")
        #expect(result.findings.first?.message.contains("does not exist") == true)
    }

    @Test func binaryGarbageIsRejectedCleanly() {
        let result = FormLoader().load(Data([0xFF, 0xFE, 0x00, 0x7B, 0x22]), file: "garbage.json")
        #expect(result.loaded == nil)
        #expect(result.findings.first?.rule == "json-syntax")
    }
}

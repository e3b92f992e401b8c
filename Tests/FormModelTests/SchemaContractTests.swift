import Foundation
import Testing
@testable import FormModel

/// Holds the Swift loader to Schema/form-definition.schema.json: it validates with the file as compiled in,
/// and the corpus that Python's jsonschema rejects (Tests/schema/check_forms.py) is rejected here too.
struct SchemaContractTests {
    /// The build compiles the file in (the SchemaConstants plugin): the text the loader parses is the file's, byte for byte.
    @Test func theCompiledInSchemaIsTheContractFile() throws {
        let file = try String(contentsOfFile: Fixtures.path("Schema/form-definition.schema.json"), encoding: .utf8)
        #expect(FormDefinitionSchema.text == file)
    }

    @Test(arguments: [
        ("missing-title.json", "$", "missing the required property \"title\"", 1),
        ("unknown-kind.json", "$.pages[0].fields[0].kind", "\"slider\"", 7),
        ("empty-choices.json", "$.pages[0].fields[0].choices", "must not be empty", 7),
        ("choices-missing.json", "$.pages[0].fields[0]", "missing the required property \"choices\"", 7),
        ("unknown-property.json", "$.colour", "not a known property", 6),
        ("bad-version.json", "$.version", "at least 1", 3),
        ("bad-style.json", "$.presentation", "\"modal\"", 5),
        ("no-pages.json", "$.pages", "must not be empty", 6),
        ("required-not-bool.json", "$.pages[0].fields[0].required", "must be a boolean or an object, not a string", 6),
        ("bad-form-id.json", "$.id", "does not match the pattern", 2),
        ("empty-cancel.json", "$.cancelLabel", "must not be empty", 6),
    ])
    func theInvalidCorpusIsRejectedWithAPreciseFinding(file: String, path: String, message: String, line: Int) throws {
        let result = FormLoader().load(contentsOf: Fixtures.path("Tests/schema/invalid/\(file)"))
        #expect(result.loaded == nil)
        let finding = try #require(result.findings.first { $0.path.description == path }, "\(result.findings)")
        #expect(finding.rule == "schema")
        #expect(finding.message.contains(message), "\(finding.message)")
        #expect(finding.location?.line == line)
    }

    @Test func everyFileOfTheInvalidCorpusIsCovered() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.path("Tests/schema/invalid")).filter { $0.hasSuffix(".json") }
        #expect(names.count == 11)
        for name in names {
            #expect(FormLoader().load(contentsOf: Fixtures.path("Tests/schema/invalid/\(name)")).loaded == nil, "\(name)")
        }
    }

    @Test func theValidatorRefusesSchemasUsingKeywordsItDoesNotImplement() throws {
        let schema = try JSONParser().parse(#"{ "type": "object", "properties": { "a": { "format": "email" } } }"#)
        #expect(throws: SchemaValidator.UnsupportedKeyword.self) { try SchemaValidator(schema: schema.value) }
    }

    @Test func validatorHandlesTypeUnionsCombinatorsAndConditionals() throws {
        let schema = try SchemaValidator(schema: JSONParser().parse(#"""
            { "type": ["object"], "properties": {
                "n": { "type": ["integer", "null"] },
                "o": { "oneOf": [{ "type": "string" }, { "type": "integer" }] },
                "k": { "enum": ["a", "b"] } },
              "if": { "properties": { "k": { "const": "a" } }, "required": ["k"] },
              "then": { "required": ["n"] } }
            """#).value)
        #expect(schema.validate(try JSONParser().parse(#"{ "n": null, "o": 3, "k": "a" }"#)).isEmpty)
        #expect(schema.validate(try JSONParser().parse(#"{ "k": "b" }"#)).isEmpty)
        let missing = schema.validate(try JSONParser().parse(#"{ "k": "a" }"#))
        #expect(missing.map(\.message) == ["is missing the required property \"n\""])
        let wrong = schema.validate(try JSONParser().parse(#"{ "n": 1.5, "o": true }"#))
        #expect(wrong.map(\.path.description) == ["$.n", "$.o"])
    }
}

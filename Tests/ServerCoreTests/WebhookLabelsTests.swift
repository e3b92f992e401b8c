import Foundation
import FormModel
import ServerStorage
import SyncCore
import Testing

/// The labels a webhook event carries beside a record's values (``WebhookLabels``): every field the record
/// holds, repeat fields once by id with their repeat, the chosen values' labels only, the default language,
/// and nothing for keys the form does not know. The end-to-end tests hold the labels in delivered bodies.
struct WebhookLabelsTests {
    static let form = FormDefinition(
        id: "inspection", title: "Inspection", completionLabel: "Done",
        pages: [FormPage(id: "main", fields: [
            FieldDefinition(id: "site", kind: .text, label: LocalizedText(translations: ["en": "Site", "fr": "Lieu"], defaultLanguage: "fr")),
            FieldDefinition(id: "tags", kind: .multipleChoice, label: "Tags", choices: [
                Choice(value: "roof", label: "Roof"), Choice(value: "pump", label: "Pump"), Choice(value: "gate", label: "Gate"),
            ]),
            FieldDefinition(id: "defects", kind: .repeat, label: "Defects", fields: [
                FieldDefinition(id: "severity", kind: .singleChoice, label: "Severity", choices: [
                    Choice(value: "low", label: "Low"), Choice(value: "high", label: "High"),
                ]),
            ]),
            FieldDefinition(id: "notes", kind: .text, label: "Notes"),
        ])],
        languages: ["en", "fr"], defaultLanguage: "fr")

    static func labels(_ values: [String: AnswerValue?]) throws -> [String: Any] {
        var fields = RecordFields()
        for (key, value) in values {
            fields[key] = FieldState(value: value, revision: 1, hlc: HybridTimestamp(millis: 1, counter: 0), clientID: "device")
        }
        var writer = JSONWriter()
        writer.beginObject()
        WebhookLabels(form: form).write(fields, to: &writer)
        writer.endObject()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [String: Any])
        return try #require(object["labels"] as? [String: Any])
    }

    @Test func theLabelsNameTheRecordsFieldsAndItsChosenValuesOnly() throws {
        let labels = try Self.labels([
            "site": .text("Pump 4"),
            "tags": .choices(["roof", "pump"]),
            "defects/a1/@position": .integer(0),
            "defects/a1/severity": .choice("high"),
            "defects/b2/severity": .choice("low"),
            "notes": nil,
            "retired": .text("a field this version does not have"),
        ])
        let fields = try #require(labels["fields"] as? [String: String])
        #expect(fields == ["site": "Lieu", "tags": "Tags", "defects": "Defects", "severity": "Severity", "notes": "Notes"])
        let choices = try #require(labels["choices"] as? [String: [String: String]])
        #expect(choices == ["tags": ["roof": "Roof", "pump": "Pump"], "severity": ["high": "High", "low": "Low"]])
    }

    @Test func aValueTheFormDoesNotListGetsNoLabel() throws {
        let labels = try Self.labels(["tags": .choices(["roof", "unheard-of"]), "defects/a1/severity": .raw("hgih")])
        #expect(labels["choices"] as? [String: [String: String]] == ["tags": ["roof": "Roof"]])
    }

    @Test func theLabelsOfAStoredDefinitionAreDecodedOncePerDigest() throws {
        let definition = String(decoding: try JSONEncoder().encode(Self.form), as: UTF8.self)
        let digest = "test-digest-\(UUID().uuidString)"
        #expect(WebhookLabels.cached(digest: digest) == nil)
        #expect(WebhookLabels.decode(digest: digest, definition: definition) != nil)
        #expect(WebhookLabels.cached(digest: digest) != nil)
        #expect(WebhookLabels.decode(digest: "", definition: "{not a form") == nil)
        #expect(WebhookLabels.cached(digest: "") == nil)
    }
}

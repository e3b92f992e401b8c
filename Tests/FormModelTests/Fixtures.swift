import Foundation
@testable import FormModel

/// Paths and small forms shared by the FormModel tests (read-only; every test builds its own values).
enum Fixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func path(_ relative: String) -> String {
        packageRoot.appendingPathComponent(relative).path
    }

    static var exampleForms: [String] {
        let directory = path("Schema/forms")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { directory + "/" + $0 }
    }

    /// Loads a form from JSON text, returning the loader's result.
    static func load(_ json: String, file: String = "test.json") -> FormLoadResult {
        FormLoader().load(Data(json.utf8), file: file)
    }

    /// A valid form with one page of `fields` (JSON array text).
    static func formJSON(fields: String, extra: String = "") -> String {
        """
        {
          "id": "job",
          "version": 1,
          "title": "New Follow-up Job",
          "completionLabel": "Create",\(extra)
          "pages": [{ "id": "main", "fields": \(fields) }]
        }
        """
    }

    static let jobForm = FormDefinition(
        id: "job", title: "New Follow-up Job", presentation: .formSheet, completionLabel: "Create",
        pages: [
            FormPage(id: "main", fields: [
                FieldDefinition(id: "site", kind: .text, label: "Site", required: true, maxLength: 10),
                FieldDefinition(id: "priority", kind: .singleChoice, label: "Priority", required: true,
                                choices: [Choice(value: "low", label: "Low"), Choice(value: "high", label: "High")]),
                FieldDefinition(id: "count", kind: .integer, label: "Technicians", min: 1, max: 5),
                FieldDefinition(id: "reason", kind: .multilineText, label: "Reason", required: true, relevant: "priority == 'high'"),
                FieldDefinition(id: "code", kind: .text, label: "Code", pattern: "[A-Z]{3}-[0-9]+", patternMessage: "Use the form ABC-123."),
            ])
        ])
}

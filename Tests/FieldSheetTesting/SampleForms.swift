import Foundation
import FormModel

/// Form definitions for tests, as JSON text (what `fieldsheet forms import` reads) and as loaded forms.
public enum SampleForms {
    /// A follow-up job: site (text, required), priority (low/normal/high, default normal),
    /// count (integer 1…5), notes (multiline text, shown only when priority is high).
    public static func followUpJobJSON(version: Int = 1, editableAfterSubmit: Bool = false, title: String = "New Follow-up Job") -> String {
        """
        {
          "id": "follow-up-job",
          "version": \(version),
          "title": "\(title)",
          "description": "Book a return visit for work that could not be finished.",
          "presentation": "formSheet",
          "completionLabel": "Create",
          "editableAfterSubmit": \(editableAfterSubmit),
          "pages": [
            {
              "id": "job",
              "fields": [
                { "id": "site", "kind": "text", "label": "Site", "hint": "Building and room, e.g. B2 basement", "required": true },
                { "id": "priority", "kind": "singleChoice", "label": "Priority", "default": "normal",
                  "choices": [
                    { "value": "low", "label": "Low" },
                    { "value": "normal", "label": "Normal" },
                    { "value": "high", "label": "High" }
                  ] },
                { "id": "count", "kind": "integer", "label": "Technicians needed", "min": 1, "max": 5 },
                { "id": "notes", "kind": "multilineText", "label": "Notes", "relevant": "priority == 'high'" }
              ]
            }
          ]
        }
        """
    }

    /// The follow-up job form, loaded through `FormLoader` as the client would.
    public static func followUpJob(version: Int = 1, editableAfterSubmit: Bool = false) -> FormDefinition {
        load(followUpJobJSON(version: version, editableAfterSubmit: editableAfterSubmit))
    }

    /// A form with `fieldCount` text fields `f0`, `f1`, … (none required), for benchmarks and the crash test.
    public static func wideFormJSON(id: String = "wide-form", fieldCount: Int, editableAfterSubmit: Bool = true) -> String {
        let fields = (0..<fieldCount).map { index in
            #"{ "id": "f\#(index)", "kind": "text", "label": "Field \#(index)" }"#
        }.joined(separator: ",\n")
        return """
            {
              "id": "\(id)", "version": 1, "title": "Wide Inspection", "completionLabel": "Submit",
              "editableAfterSubmit": \(editableAfterSubmit),
              "pages": [ { "id": "all", "fields": [
            \(fields)
              ] } ]
            }
            """
    }

    public static func wideForm(id: String = "wide-form", fieldCount: Int, editableAfterSubmit: Bool = true) -> FormDefinition {
        load(wideFormJSON(id: id, fieldCount: fieldCount, editableAfterSubmit: editableAfterSubmit))
    }

    static func load(_ json: String) -> FormDefinition {
        let result = FormLoader().load(Data(json.utf8), file: "fixture.json")
        guard let form = result.loaded?.form else {
            fatalError("A test fixture form does not load: \(result.findings.map(\.description).joined(separator: "\n"))")
        }
        return form
    }
}

// Generated from Schema/form-definition.schema.json by `make embed-schema`; do not edit.

/// The form-definition JSON Schema, compiled in so the linter needs no file at run time.
enum FormDefinitionSchema {
    static let json = #"""
    {
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "$id": "https://fieldsheet.dev/schema/form-definition.schema.json",
      "title": "FieldSheet form definition",
      "description": "A form a field worker fills in a modal sheet: what it asks, how it is presented, how it completes and how conflicts on its fields are merged.",
      "type": "object",
      "required": ["id", "version", "title", "completionLabel", "pages"],
      "additionalProperties": false,
      "properties": {
        "$schema": { "type": "string" },
        "id": {
          "description": "Stable identifier shared by every version of the form.",
          "type": "string",
          "pattern": "^[a-z][a-z0-9-]*$",
          "maxLength": 64
        },
        "version": { "description": "Increases with every published change.", "type": "integer", "minimum": 1 },
        "title": { "description": "Names the task, shown in the sheet's title bar.", "type": "string", "minLength": 1, "maxLength": 80 },
        "description": { "type": "string" },
        "presentation": {
          "description": "The modal presentation style.",
          "enum": ["automatic", "formSheet", "pageSheet", "fullScreen", "popover", "currentContext"]
        },
        "completionLabel": { "description": "The completion button, named for the task.", "type": "string", "minLength": 1, "maxLength": 24 },
        "cancelLabel": { "description": "The dismiss button; defaults to Cancel.", "type": "string", "minLength": 1, "maxLength": 24 },
        "transition": { "enum": ["coverVertical", "crossDissolve", "flipHorizontal", "partialCurl"] },
        "transitionReason": { "description": "Why this form's transition differs from the rest.", "type": "string", "minLength": 1 },
        "anchor": { "description": "The control a popover points at.", "type": "string", "minLength": 1 },
        "parent": { "description": "The id of the form whose sheet or popover opens this one.", "type": "string", "minLength": 1 },
        "pane": { "description": "For currentContext: the split-view pane the sheet covers.", "enum": ["list", "detail"] },
        "conflictPolicy": { "$ref": "#/$defs/conflictPolicy" },
        "editableAfterSubmit": { "type": "boolean" },
        "pages": { "type": "array", "minItems": 1, "items": { "$ref": "#/$defs/page" } }
      },
      "$defs": {
        "conflictPolicy": { "enum": ["lastWriterWins", "serverWins", "clientWins", "manual"] },
        "page": {
          "type": "object",
          "required": ["id", "fields"],
          "additionalProperties": false,
          "properties": {
            "id": { "type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_-]*$" },
            "title": { "type": "string", "minLength": 1 },
            "fields": { "type": "array", "minItems": 1, "items": { "$ref": "#/$defs/field" } }
          }
        },
        "field": {
          "type": "object",
          "required": ["id", "kind", "label"],
          "additionalProperties": false,
          "properties": {
            "id": { "type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$", "maxLength": 64 },
            "kind": {
              "enum": ["text", "multilineText", "integer", "decimal", "boolean", "date", "time", "dateTime",
                       "singleChoice", "multipleChoice", "location", "note"]
            },
            "label": { "type": "string", "minLength": 1 },
            "hint": { "type": "string" },
            "required": { "type": "boolean" },
            "default": {},
            "min": { "type": "number" },
            "max": { "type": "number" },
            "minLength": { "type": "integer", "minimum": 0 },
            "maxLength": { "type": "integer", "minimum": 1 },
            "pattern": { "type": "string", "minLength": 1 },
            "patternMessage": { "type": "string", "minLength": 1 },
            "choices": { "type": "array", "minItems": 1, "items": { "$ref": "#/$defs/choice" } },
            "relevant": { "type": "string", "minLength": 1 },
            "conflictPolicy": { "$ref": "#/$defs/conflictPolicy" }
          },
          "allOf": [
            {
              "if": { "properties": { "kind": { "enum": ["singleChoice", "multipleChoice"] } }, "required": ["kind"] },
              "then": { "required": ["choices"] }
            }
          ]
        },
        "choice": {
          "type": "object",
          "required": ["value", "label"],
          "additionalProperties": false,
          "properties": {
            "value": { "type": "string", "minLength": 1 },
            "label": { "type": "string", "minLength": 1 }
          }
        }
      }
    }
    """#
}

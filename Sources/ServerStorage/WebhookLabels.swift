import Foundation
import FormModel
import SyncCore
import Synchronization

/// The labels a webhook event carries beside a record's values: what a receiver shows a person without
/// fetching the form (docs/integrations.md, "Webhooks").
///
/// They are resolved from the record's form version when the event is written, in the push's transaction,
/// and become part of the body; every attempt sends those same bytes, so a retry never reads the record or its
/// form again. A form version never changes once published, so the labels are those of the version the record
/// was saved with, in the form's default language.
///
/// ```json
/// "labels": {"fields": {"status": "Status", "defects": "Defects", "severity": "Severity"},
///            "choices": {"status": {"open": "Open"}, "severity": {"high": "High"}}}
/// ```
///
/// `fields` names every field the record holds a key of (a repeat's fields by their field id, once, and the
/// repeat itself); `choices` gives, for each choice field, the labels of the values chosen in it (anywhere in
/// the record), not its whole list. A sealed (sensitive) answer's field is named, its value is not labelled;
/// an entity choice's value is the entity id, labelled by the entity's own events.
package struct WebhookLabels: Sendable {
    let fields: FormFields
    let language: String?

    /// The labels of `form`'s fields.
    package init(form: FormDefinition) {
        fields = FormFields(form: form)
        language = form.defaultLanguage
    }

    /// Writes `"labels": {…}` for the fields `record` holds.
    package func write(_ record: RecordFields, to writer: inout JSONWriter) {
        var fieldLabels: [String: String] = [:]
        var choiceLabels: [String: [String: String]] = [:]
        for (key, state) in record.states {
            guard let path = AnswerKey(key) else { continue }
            for step in path.steps where fieldLabels[step.group] == nil {
                if let group = fields.byID[step.group] { fieldLabels[group.id] = group.label.text(in: language) }
            }
            guard let field = fields.definition(of: path) else { continue }
            if fieldLabels[field.id] == nil { fieldLabels[field.id] = field.label.text(in: language) }
            guard let choices = field.choices, !choices.isEmpty, let value = state.value else { continue }
            let chosen: [String]
            switch value {
            case .choice(let one): chosen = [one]
            case .choices(let many): chosen = many
            default: chosen = []
            }
            for value in chosen where choiceLabels[field.id]?[value] == nil {
                guard let choice = choices.first(where: { $0.value == value }) else { continue }
                choiceLabels[field.id, default: [:]][value] = choice.label.text(in: language)
            }
        }
        writer.key("labels")
        writer.beginObject()
        writer.key("fields")
        writer.beginObject()
        for id in fieldLabels.keys.sorted() {
            writer.key(id)
            writer.string(fieldLabels[id]!)
        }
        writer.endObject()
        writer.key("choices")
        writer.beginObject()
        for id in choiceLabels.keys.sorted() {
            writer.key(id)
            writer.beginObject()
            let labels = choiceLabels[id]!
            for value in labels.keys.sorted() {
                writer.key(value)
                writer.string(labels[value]!)
            }
            writer.endObject()
        }
        writer.endObject()
        writer.endObject()
    }

    /// The labels of stored form versions by their definition's digest, decoded once per process: a push that
    /// writes events then pays one indexed read of the digest, not a decoding of the form.
    private static let cache = Mutex<[String: WebhookLabels]>([:])
    private static let cacheLimit = 256

    /// The labels of the form version whose definition has `digest`, when this process decoded them before
    /// (an empty digest is never cached).
    package static func cached(digest: String) -> WebhookLabels? {
        digest.isEmpty ? nil : cache.withLock { $0[digest] }
    }

    /// Decodes the labels of a stored definition and keeps them by `digest` for ``cached(digest:)``; nil when
    /// the definition cannot be read.
    package static func decode(digest: String, definition: String) -> WebhookLabels? {
        guard let form = try? JSONDecoder().decode(FormDefinition.self, from: Data(definition.utf8)) else { return nil }
        let labels = WebhookLabels(form: form)
        if !digest.isEmpty {
            cache.withLock { cache in
                if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
                cache[digest] = labels
            }
        }
        return labels
    }
}

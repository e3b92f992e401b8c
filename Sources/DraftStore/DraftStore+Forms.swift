import Foundation
import FormModel
import GRDB

extension DraftStore {
    /// Stores form definitions, every version kept, all in one transaction: when one of them clashes
    /// with a stored version (same id and version, different definition) nothing is imported.
    @discardableResult
    public func importForms(_ forms: [FormDefinition]) async throws -> [FormImportOutcome] {
        let encoded = try forms.map { form in (form, try Self.encodeForm(form)) }
        let outcomes = try await write(doing: "importing forms") { db in
            var outcomes: [FormImportOutcome] = []
            for (form, json) in encoded {
                if let stored = try String.fetchOne(db, sql: "SELECT definition FROM forms WHERE id = ? AND version = ?", arguments: [form.id, form.version]) {
                    guard stored == json else {
                        throw DraftStoreError(.formVersionClash,
                            "The form \(form.id) version \(form.version) is already stored with a different definition. Nothing was imported; give the changed form a higher version.")
                    }
                    outcomes.append(.unchanged(FormKey(id: form.id, version: form.version)))
                    continue
                }
                try db.execute(
                    sql: "INSERT INTO forms (id, version, title, definition, imported_at) VALUES (?, ?, ?, ?, ?)",
                    arguments: [form.id, form.version, form.title, json, Self.nowMillis()])
                outcomes.append(.imported(FormKey(id: form.id, version: form.version)))
            }
            return outcomes
        }
        forms.forEach(formCache.insert)
        return outcomes
    }

    /// Every stored form, newest version's title, ordered by id.
    public func forms() async throws -> [FormSummary] {
        try await read(doing: "listing forms") { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, version, title FROM forms ORDER BY id, version")
            var summaries: [FormSummary] = []
            for row in rows {
                let id: String = row["id"]
                let version: Int = row["version"]
                if summaries.last?.id == id {
                    summaries[summaries.count - 1].version = version
                    summaries[summaries.count - 1].title = row["title"]
                    summaries[summaries.count - 1].versions.append(version)
                } else {
                    summaries.append(FormSummary(id: id, version: version, title: row["title"], versions: [version]))
                }
            }
            return summaries
        }
    }

    /// The form version `key` names (a record's ``StoredRecord/form``).
    /// - Throws: `DraftStoreError.Code.unknownForm` naming the forms that are stored.
    public func form(_ key: FormKey) async throws -> FormDefinition {
        try await form(id: key.id, version: key.version)
    }

    /// The form `id` at `version`, or at its newest stored version when `version` is nil.
    /// - Throws: `DraftStoreError.Code.unknownForm` naming the forms that are stored.
    public func form(id: String, version: Int? = nil) async throws -> FormDefinition {
        if let version, let cached = formCache.form(id: id, version: version) { return cached }
        let json = try await read(doing: "reading the form \(id)") { db -> String? in
            if let version {
                return try String.fetchOne(db, sql: "SELECT definition FROM forms WHERE id = ? AND version = ?", arguments: [id, version])
            }
            return try String.fetchOne(db, sql: "SELECT definition FROM forms WHERE id = ? ORDER BY version DESC LIMIT 1", arguments: [id])
        }
        guard let json else {
            let known = try await forms().map(\.id)
            let list = known.isEmpty ? "No forms are stored yet; import one with `fieldsheet forms import FILE`." : "Stored forms: \(known.joined(separator: ", "))."
            let which = version.map { "\"\(id)\" version \($0)" } ?? "\"\(id)\""
            throw DraftStoreError(.unknownForm, "There is no form \(which) on this device. \(list)")
        }
        if let version, let cached = formCache.form(id: id, version: version) { return cached }
        do {
            let form = try JSONDecoder().decode(FormDefinition.self, from: Data(json.utf8))
            formCache.insert(form)
            return form
        } catch {
            throw DraftStoreError(.databaseDamaged,
                "The stored definition of form \(id) cannot be read (\(error)). Import the form again with `fieldsheet forms import FILE`.")
        }
    }

    static func encodeForm(_ form: FormDefinition) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(form), as: UTF8.self)
    }
}

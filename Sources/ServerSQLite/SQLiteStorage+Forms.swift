import Foundation
import FormModel
import GRDB
import ServerStorage

extension SQLiteStorage {
    public func forms(projectID: Int64) async throws -> [PublishedForm] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM forms WHERE project_id = ? ORDER BY form_id, version", arguments: [projectID])
                .map(Self.publishedForm)
        }
    }

    public func forms(projectID: Int64, formID: String) async throws -> [PublishedForm] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM forms WHERE project_id = ? AND form_id = ? ORDER BY version", arguments: [projectID, formID])
                .map(Self.publishedForm)
        }
    }

    public func form(projectID: Int64, formID: String, version: Int) async throws -> PublishedForm? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM forms WHERE project_id = ? AND form_id = ? AND version = ?", arguments: [projectID, formID, version])
                .map(Self.publishedForm)
        }
    }

    public func fieldsInUse(projectID: Int64, formID: String) async throws -> Set<String> {
        try await pool.read { db in
            Set(try String.fetchAll(db, sql: """
                SELECT DISTINCT j.key FROM records r, json_each(r.fields, '$.values') j
                WHERE r.project_id = ? AND r.form_id = ? AND j.type != 'null'
                """, arguments: [projectID, formID]))
        }
    }

    public func insertForm(_ form: PublishedForm) async throws {
        let definition = String(decoding: try JSONEncoder().encode(form.definition), as: UTF8.self)
        try await write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM forms WHERE project_id = ? AND form_id = ? AND version = ?", arguments: [form.projectID, form.formID, form.version]) == true {
                throw StorageError(.versionTaken, "Version \(form.version) of form \"\(form.formID)\" is already published.")
            }
            try db.execute(
                sql: "INSERT INTO forms (project_id, form_id, version, definition, digest, published_at) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [form.projectID, form.formID, form.version, definition, form.digest, form.publishedAt.timeIntervalSince1970])
        }
    }

    static func publishedForm(_ row: Row) throws -> PublishedForm {
        let definition: String = row["definition"]
        return PublishedForm(
            projectID: row["project_id"],
            definition: try JSONDecoder().decode(FormDefinition.self, from: Data(definition.utf8)),
            digest: row["digest"],
            publishedAt: Date(timeIntervalSince1970: row["published_at"]))
    }
}

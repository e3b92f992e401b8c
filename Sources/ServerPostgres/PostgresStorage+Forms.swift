import Foundation
import FormModel
import PostgresNIO
import ServerStorage

extension PostgresStorage {
    public func forms(projectID: Int64) async throws -> [PublishedForm] {
        let client = client
        return try await perform {
            try await Self.publishedForms(try await client.query("""
                SELECT project_id, definition, digest, published_at FROM forms WHERE project_id = \(projectID) ORDER BY form_id, version
                """))
        }
    }

    public func forms(projectID: Int64, formID: String) async throws -> [PublishedForm] {
        let client = client
        return try await perform {
            try await Self.publishedForms(try await client.query("""
                SELECT project_id, definition, digest, published_at FROM forms
                WHERE project_id = \(projectID) AND form_id = \(formID) ORDER BY version
                """))
        }
    }

    public func form(projectID: Int64, formID: String, version: Int) async throws -> PublishedForm? {
        let client = client
        return try await perform {
            try await Self.publishedForms(try await client.query("""
                SELECT project_id, definition, digest, published_at FROM forms
                WHERE project_id = \(projectID) AND form_id = \(formID) AND version = \(Int64(version))
                """)).first
        }
    }

    public func fieldsInUse(projectID: Int64, formID: String) async throws -> Set<String> {
        let client = client
        return try await perform {
            var result = Set<String>()
            for try await key in try await client.query("""
                SELECT DISTINCT j.key FROM records r, jsonb_each(r.fields::jsonb -> 'values') j
                WHERE r.project_id = \(projectID) AND r.form_id = \(formID) AND j.value <> 'null'::jsonb
                """).decode(String.self) {
                result.insert(key)
            }
            return result
        }
    }

    public func insertForm(_ form: PublishedForm) async throws {
        let definition = String(decoding: try JSONEncoder().encode(form.definition), as: UTF8.self)
        let client = client
        do {
            _ = try await perform {
                try await client.query("""
                    INSERT INTO forms (project_id, form_id, version, definition, digest, published_at)
                    VALUES (\(form.projectID), \(form.formID), \(Int64(form.version)), \(definition), \(form.digest), \(form.publishedAt.timeIntervalSince1970))
                    """).collect()
            }
        } catch where Self.isUniqueViolation(error) {
            throw StorageError(.versionTaken, "Version \(form.version) of form \"\(form.formID)\" is already published.")
        }
    }

    static func publishedForms(_ rows: PostgresRowSequence) async throws -> [PublishedForm] {
        let decoder = JSONDecoder()
        var result: [PublishedForm] = []
        for try await (projectID, definition, digest, publishedAt) in rows.decode((Int64, String, String, Double).self) {
            result.append(PublishedForm(
                projectID: projectID, definition: try decoder.decode(FormDefinition.self, from: Data(definition.utf8)),
                digest: digest, publishedAt: Date(timeIntervalSince1970: publishedAt)))
        }
        return result
    }
}

import Crypto
import Foundation
import FormModel
import ServerStorage

/// Why a form was not published.
public struct FormPublishError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The file does not load or has lint errors.
        case invalid
        /// The new version would break records already stored.
        case breaking
    }

    public var code: Code
    /// One sentence per reason (lint findings or breaking changes).
    public var reasons: [String]

    public var description: String { reasons.joined(separator: "\n") }

    var problem: Problem {
        switch code {
        case .invalid:
            return Problem(.unprocessableContent, "invalid-form", title: "Invalid form definition", detail: reasons.joined(separator: " "))
        case .breaking:
            return Problem(.conflict, "breaking-form-change", title: "Form change would break stored records", detail: reasons.joined(separator: " "))
        }
    }
}

/// Publishes form definitions: lint and load, then compare with the latest version — unchanged forms
/// keep their version, changed ones get the next, and changes that would break stored records
/// (changing the kind of a field records hold values for, moving it into or out of a repeat) are refused.
/// Removing a field records hold values for is not: those records keep their values under the version they
/// were made on (exports keep the field's column), and a draft moved to the new version clears its answer
/// there, its history keeping it.
public struct FormPublisher: Sendable {
    public struct Result: Sendable {
        public var form: PublishedForm
        /// Whether a new version was stored (false: identical to the latest).
        public var isNew: Bool
        public var warnings: [Finding]
    }

    let storage: any ServerStorage

    public init(storage: any ServerStorage) {
        self.storage = storage
    }

    /// What publishing a file would do, found out without storing anything: the console shows it before an
    /// admin publishes.
    public struct Check: Sendable {
        /// The form as it would be published (with the version it would get), when the file loads.
        public var definition: FormDefinition?
        /// The loader's and the linter's findings, errors and warnings.
        public var findings: [Finding]
        /// Why the form cannot be published over the versions stored (breaking changes).
        public var breaking: [String]
        /// The latest version, when the file is identical to it (publishing would change nothing).
        public var unchanged: PublishedForm?
        /// The definition's digest (``FormPublisher/digest(of:)``).
        var digest: String

        /// Whether publishing stores a new version.
        public var publishesNewVersion: Bool { definition != nil && !findings.hasErrors && breaking.isEmpty && unchanged == nil }
    }

    /// Loads and lints `data` and compares it with the project's versions of the form.
    public func check(_ data: Data, file: String, projectID: Int64) async throws -> Check {
        let loaded = FormLoader().load(data, file: file)
        guard let form = loaded.loaded else {
            return Check(definition: nil, findings: loaded.findings, breaking: [], unchanged: nil, digest: "")
        }
        let findings = loaded.findings + FormLinter().lint([form])
        var definition = form.form
        let digest = try Self.digest(of: definition)
        let versions = try await storage.forms(projectID: projectID, formID: definition.id)
        definition.version = (versions.last?.version ?? 0) + 1
        if let latest = versions.last, latest.digest == digest {
            return Check(definition: latest.definition, findings: findings, breaking: [], unchanged: latest, digest: digest)
        }
        let inUse = try await storage.fieldsInUse(projectID: projectID, formID: definition.id)
        let reasons = Self.breakingChanges(from: versions.map(\.definition), to: definition, fieldsInUse: inUse)
        return Check(definition: definition, findings: findings, breaking: reasons, unchanged: nil, digest: digest)
    }

    public func publish(_ data: Data, file: String, projectID: Int64) async throws -> Result {
        let check = try await check(data, file: file, projectID: projectID)
        guard let definition = check.definition, !check.findings.hasErrors else {
            throw FormPublishError(code: .invalid, reasons: check.findings.filter { $0.severity == .error }.map(\.description))
        }
        let warnings = check.findings.filter { $0.severity == .warning }
        if let latest = check.unchanged {
            return Result(form: latest, isNew: false, warnings: warnings)
        }
        guard check.breaking.isEmpty else { throw FormPublishError(code: .breaking, reasons: check.breaking) }
        if let entity = definition.entity {
            // The list comes into being, or gains the properties this form saves; a kind never changes.
            do {
                try await storage.declareEntityList(projectID: projectID, name: entity.list, properties: Self.entityProperties(of: definition))
            } catch let error as StorageError where error.code == .entityPropertyKind {
                throw FormPublishError(code: .breaking, reasons: [error.detail])
            }
        }
        let published = PublishedForm(projectID: projectID, definition: definition, digest: check.digest, publishedAt: Date())
        try await storage.insertForm(published)
        return Result(form: published, isNew: true, warnings: warnings)
    }

    /// The entity properties a form saves (`saveTo`), each with its field's kind, in field order.
    static func entityProperties(of form: FormDefinition) -> [EntityProperty] {
        let fields = FormFields(form: form)
        return fields.order.compactMap { id in
            fields.byID[id].flatMap { field in field.saveTo.map { EntityProperty(name: $0, kind: field.kind) } }
        }
    }

    /// SHA-256 of the definition's canonical JSON with the version left out.
    static func digest(of definition: FormDefinition) throws -> String {
        var unversioned = definition
        unversioned.version = 0
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return SHA256.hash(data: try encoder.encode(unversioned)).map { String(format: "%02x", $0) }.joined()
    }

    /// Reasons the new definition would break stored records, in field order. Stored keys of repeat instances
    /// (`defects/<id>/severity`, `defects/<id>/@removed`) count for their field and the repeats holding it: adding
    /// a repeat or a field inside one is allowed, and so is removing one records use (the key then means nothing
    /// in the new version); changing its kind, or moving it into or out of a repeat, is not (the same key would
    /// mean another thing).
    static func breakingChanges(from versions: [FormDefinition], to new: FormDefinition, fieldsInUse: Set<String>) -> [String] {
        var ids = Set<String>()
        for key in fieldsInUse {
            guard let path = AnswerKey(key) else { continue }
            ids.formUnion(path.steps.map(\.group))
            if !path.isInstanceMeta { ids.insert(path.field) }
        }
        let newFields = FormFields(form: new)
        var reasons: [String] = []
        for fieldID in ids.sorted() {
            guard let oldForm = versions.reversed().first(where: { $0.field(fieldID) != nil }), let old = oldForm.field(fieldID) else { continue }
            guard let replacement = newFields.byID[fieldID] else { continue }
            if replacement.kind != old.kind {
                reasons.append("The field \"\(fieldID)\" changes from \(old.kind.rawValue) to \(replacement.kind.rawValue), but stored records hold \(old.kind.rawValue) values for it. Add a new field with a new id instead.")
            }
            let before = FormFields(form: oldForm).repeatChain(fieldID)
            let after = newFields.repeatChain(fieldID)
            if before != after {
                let place = { (chain: [String]) in chain.isEmpty ? "the top level" : "the repeat \"\(chain.joined(separator: "\" inside \""))\"" }
                reasons.append("The field \"\(fieldID)\" moves from \(place(before)) to \(place(after)), but stored records hold values for it where it was. Add a new field with a new id instead.")
            }
        }
        return reasons
    }
}

import FormModel
import ServerStorage
import Synchronization

/// Published form versions, cached with their validators (the form's expressions parsed, its fields
/// indexed): a published version never changes, so a cached one is never stale, and a push of a long
/// questionnaire does not parse the form again.
package final class FormCatalog: Sendable {
    let storage: any ServerStorage
    private let cache = Mutex<[Int64: [FormKey: FormValidator]]>([:])

    package init(storage: any ServerStorage) {
        self.storage = storage
    }

    /// The validators of the named versions that exist in the project (missing ones are left out); each
    /// holds its form (`logic.form`).
    func validators(projectID: Int64, keys: Set<FormKey>) async throws -> [FormKey: FormValidator] {
        var found: [FormKey: FormValidator] = [:]
        cache.withLock { cache in
            for key in keys { found[key] = cache[projectID]?[key] }
        }
        for key in keys where found[key] == nil {
            guard let form = try await storage.form(projectID: projectID, formID: key.id, version: key.version) else { continue }
            let validator = FormValidator(form: form.definition)
            found[key] = validator
            cache.withLock { $0[projectID, default: [:]][key] = validator }
        }
        return found
    }
}

import FormModel
import ServerStorage
import Synchronization

/// Published form versions, cached: a published version never changes, so a cached one is never stale.
public final class FormCatalog: Sendable {
    let storage: any ServerStorage
    private let cache = Mutex<[Int64: [FormKey: FormDefinition]]>([:])

    public init(storage: any ServerStorage) {
        self.storage = storage
    }

    /// The named versions that exist in the project (missing ones are left out).
    func forms(projectId: Int64, keys: Set<FormKey>) async throws -> [FormKey: FormDefinition] {
        var found = cache.withLock { cache in (cache[projectId] ?? [:]).filter { keys.contains($0.key) } }
        for key in keys where found[key] == nil {
            guard let form = try await storage.form(projectId: projectId, formId: key.id, version: key.version) else { continue }
            found[key] = form.definition
            cache.withLock { $0[projectId, default: [:]][key] = form.definition }
        }
        return found
    }
}

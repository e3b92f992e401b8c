import Foundation
import FormModel

/// Decoded form definitions by id and version, so opening a sheet does not parse the definition again.
///
/// Stored form versions never change, so entries never go stale.
final class FormCache: @unchecked Sendable {
    private struct Key: Hashable {
        var id: String
        var version: Int
    }

    private let lock = NSLock()
    private var forms: [Key: FormDefinition] = [:]

    func form(id: String, version: Int) -> FormDefinition? {
        lock.withLock { forms[Key(id: id, version: version)] }
    }

    func insert(_ form: FormDefinition) {
        lock.withLock { forms[Key(id: form.id, version: form.version)] = form }
    }
}

import FormModel
import Foundation
import SyncCore

/// Opens the sealed answers of an export with the project keys it was given, and tallies what stays sealed
/// (by key id), so the command can say which answers need which key file.
public final class SealedAnswerOpener: @unchecked Sendable {
    let keys: [String: ProjectPrivateKey]
    private let lock = NSLock()
    private var openedCount = 0
    private var left: [String: Int] = [:]

    init(keys: [String: ProjectPrivateKey]) {
        self.keys = keys
    }

    /// How many sealed answers were written in clear.
    public var opened: Int { lock.withLock { openedCount } }

    /// How many sealed answers stayed sealed, by the id of the key that opens them.
    public var stillSealed: [String: Int] { lock.withLock { left } }

    /// `values` with every sealed answer whose key was given opened; the others stay sealed (and are counted).
    /// An answer that does not open with its key (changed, or moved from another record) fails the export.
    func open(_ values: [String: AnswerValue], record: String) throws -> [String: AnswerValue] {
        var result = values
        for (key, value) in values {
            guard case .sealed(let sealed) = value else { continue }
            guard let privateKey = keys[sealed.key] else {
                lock.withLock { left[sealed.key, default: 0] += 1 }
                continue
            }
            result[key] = try AnswerSealing.open(sealed, with: privateKey, record: record, path: key)
            lock.withLock { openedCount += 1 }
        }
        return result
    }
}

import DraftStore
import Foundation
import FormModel

/// How the app's search index reads records (the text itself is DraftStore's `RecordSearch`).
enum SearchText {
    /// Records read per step while indexing, so keys are handled between steps.
    static let batch = 500

    static func text(of record: StoredRecord, formTitle: String, form: FormDefinition?) -> [UInt8] {
        RecordSearch.text(of: record, formTitle: formTitle, form: form)
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        RecordSearch.contains(haystack, needle)
    }
}

extension AppModel {
    /// Reads the values of the records the search index does not hold as they are now — all of them the
    /// first time — in the background, a batch at a time, off the actor: keys go on being handled.
    func indexForSearch() {
        guard indexing == nil else { return }
        var stale: [UUID] = []
        for (key, summary) in summaries where searchIndex[key].map({ !isCurrent($0.updatedAt, of: key, summary) }) ?? true {
            stale.append(summary.id)
        }
        if searchIndex.count > summaries.count { searchIndex = searchIndex.filter { summaries[$0.key] != nil } }
        guard !stale.isEmpty else { return }
        let store = store
        let titles = summaries.mapValues(\.formTitle)
        indexing = Task.detached(priority: .utility) { [weak self] in
            var forms: [FormKey: FormDefinition?] = [:]
            var start = 0
            while start < stale.count, !Task.isCancelled {
                let chunk = Array(stale[start..<min(stale.count, start + SearchText.batch)])
                start += chunk.count
                guard let records = try? await store.records(chunk, answers: .topLevel) else { break }
                var entries: [(String, Date, [UInt8])] = []
                for record in records {
                    if forms[record.form] == nil { forms[record.form] = .some(try? await store.form(record.form)) }
                    let key = record.id.lowercased
                    entries.append((key, record.updatedAt, SearchText.text(of: record, formTitle: titles[key] ?? record.form.id, form: forms[record.form] ?? nil)))
                }
                await self?.addToSearchIndex(entries)
            }
            await self?.searchIndexed()
        }
    }

    func addToSearchIndex(_ entries: [(String, Date, [UInt8])]) {
        for (key, updatedAt, text) in entries { searchIndex[key] = (updatedAt, text) }
        if home.search?.isEmpty == false { applySearch() }
    }

    func searchIndexed() {
        indexing = nil
        // Records that changed while indexing are read next.
        indexForSearch()
    }

    /// Waits until the search index holds every record as it is now (for tests and benchmarks).
    public func waitForSearchIndex() async {
        while let task = indexing { await task.value }
    }
}

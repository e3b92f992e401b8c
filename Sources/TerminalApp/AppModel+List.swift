import DraftStore
import Foundation
import FormModel
import TerminalUI

/// The home list: one summary query for every record, the values of only the rows on screen (their
/// headlines) and of the selected record (its details), and a search index read once and kept up to date.
extension AppModel {
    /// The record list as DraftStore's ``DraftStore/observeRecords(_:)`` delivers it, as an integrator's app
    /// observes it: the list as it is now, then again after every commit that changes it — this app's edits, a
    /// sync running beside it, or another process on the same home (the `fieldsheet` CLI). Each value goes to
    /// `show(_:)`. From this call on, the app's own actions do not read the list by hand (``refreshList()``):
    /// the observation is the one way a change reaches the list.
    ///
    /// The full-screen runner iterates it and shows each value as an event of its loop, between keys.
    public func observedRecords() -> StoreObservation<[RecordListSummary]> {
        followingList = true
        return store.observeRecords()
    }

    /// Follows the record list (``observedRecords()``) until the calling task is cancelled, for a caller without
    /// an event loop of its own: each value is shown, then `changed` is called, so the caller can redraw without
    /// waiting for a key.
    public func followRecords(changed: @escaping @Sendable () -> Void) async {
        defer { followingList = false }
        do {
            for try await list in observedRecords() {
                await show(list)
                changed()
            }
        } catch {
            listFailed("\(error)")
            changed()
        }
    }

    /// The observation of the record list failed: the status line says why.
    func listFailed(_ reason: String) {
        home.status = "Cannot read the records: \(reason)"
    }

    /// Reads the record list once (columns only, in one query) and shows it: for the first screen, before the
    /// observation's first value, and where nothing follows the list (tests, benchmarks).
    public func reload() async {
        do {
            await show(try await store.recordListSummaries())
        } catch {
            home.status = "Cannot read the records: \(error)"
            await refreshVisible()
        }
    }

    /// After the app's own change: the list as it is now. While the list is observed (``observedRecords()``),
    /// the observation brings the change, so nothing is read here.
    func refreshList() async {
        if !followingList { await reload() }
    }

    /// Shows `list` (the summaries of every draft and submitted record), keeping the selection on the record it
    /// was on, or on ``selectWhenListed`` once that record is listed.
    public func show(_ list: [RecordListSummary]) async {
        var items: [RecordListItem] = []
        items.reserveCapacity(list.count)
        var byID: [String: RecordListSummary] = [:]
        byID.reserveCapacity(list.count)
        var waiting = 0
        var conflicted = 0
        for summary in list {
            let key = summary.id.lowercased
            byID[key] = summary
            if summary.waitingChanges > 0 { waiting += 1 }
            if summary.openConflicts > 0 { conflicted += 1 }
            let state = Self.listState(of: summary)
            let headline = headlines[key].flatMap { isCurrent($0.updatedAt, of: key, summary) ? $0.text : nil } ?? ""
            items.append(RecordListItem(id: key, formTitle: summary.formTitle, headline: headline, state: state))
        }
        let selectedID = home.selected?.id
        summaries = byID
        home.records = items
        if let wanted = selectWhenListed, let index = home.visibleRecords.firstIndex(where: { $0.id == wanted }) {
            home.selection = index
            selectWhenListed = nil
        } else if let selectedID, let index = home.visibleRecords.firstIndex(where: { $0.id == selectedID }) {
            home.selection = index
        }
        home.moveSelection(by: 0)
        waitingRecords = waiting
        conflictedRecords = conflicted
        waitingUploads = (try? await store.waitingUploads()) ?? waitingUploads
        if home.search != nil { applySearch() }
        home.status = statusText()
        await refreshVisible()
        // After the rows on screen were read: their search text came with that read, so only the others are indexed.
        indexForSearch()
    }

    /// How the list marks a record: a conflict first; then a record the office sent back, until a fix is
    /// waiting to be sent; then a draft, a record waiting to sync, a submitted one.
    static func listState(of summary: RecordListSummary) -> RecordListItem.State {
        if summary.openConflicts > 0 { return .conflict }
        if summary.review?.state.needsChanges == true, summary.waitingChanges == 0 { return .needsChanges }
        if summary.state == .draft { return .draft }
        return summary.waitingChanges > 0 ? .queued : .submitted
    }

    /// The standing status line: sync state, what is waiting, conflicts.
    func statusText(now: Date = Date()) -> String {
        var parts: [String] = []
        if syncEngine == nil {
            parts.append("Not logged in")
        } else if syncing {
            parts.append("Syncing…")
        } else if let failure = lastSyncFailure {
            parts.append("Offline (\(failure))")
        } else if let lastSynced {
            parts.append("Synced " + Self.ago(lastSynced, now: now))
        } else {
            parts.append("Not synced yet")
        }
        parts.append(waitingRecords == 0 ? "nothing waiting to sync" : "\(waitingRecords) record\(waitingRecords == 1 ? "" : "s") waiting to sync")
        if waitingUploads.count > 0 {
            parts.append("\(waitingUploads.count) attachment\(waitingUploads.count == 1 ? "" : "s") to upload (\(AttachmentReference.formatSize(waitingUploads.bytes)))")
        }
        if conflictedRecords > 0 { parts.append("\(conflictedRecords) in conflict (c to resolve)") }
        return parts.joined(separator: " · ")
    }

    static func ago(_ date: Date, now: Date) -> String {
        let seconds = Int(now.timeIntervalSince(date))
        if seconds < 60 { return "just now" }
        if seconds < 3600 { return "\(seconds / 60) min ago" }
        return "\(seconds / 3600) h ago"
    }

    /// Reads the values of the rows now on screen (headlines) and of the selected record (details),
    /// only those not already read since they last changed.
    func refreshVisible() async {
        let window = HomeView.window(home, layout: HomeLayout(size: size))
        var missing: [UUID] = []
        for index in window {
            let item = home.visibleRecords[index]
            guard let summary = summaries[item.id] else { continue }
            if let cached = headlines[item.id], isCurrent(cached.updatedAt, of: item.id, summary) { continue }
            missing.append(summary.id)
        }
        let drops = headlineDrops
        // The form's own fields only: a headline, the details and the search text show no answer inside a repeat
        // instance, and a record of 5,000 defects holds 30,000 of those.
        if !missing.isEmpty, let records = try? await store.records(missing, answers: .topLevel) {
            let selected = home.selected?.id
            var searchEntries: [(String, Date, [UInt8])] = []
            for record in records {
                let key = record.id.lowercased
                let form = try? await store.form(record.form)
                // A sheet closed while this read waited: what was read may predate its last edits (edits made
                // within one millisecond share an `updatedAt`), so the reload the closing started reads again.
                guard drops == headlineDrops else { break }
                headlines[key] = (record.updatedAt, Self.headline(record, form: form))
                // The selected record's details are read next: from this read, not a second one.
                if key == selected { recentlyRead = record }
                // And the search index takes its text from this read too, instead of reading the record again.
                if let summary = summaries[key], summary.updatedAt == record.updatedAt, searchIndex[key]?.updatedAt != record.updatedAt {
                    searchEntries.append((key, record.updatedAt, SearchText.text(of: record, formTitle: summary.formTitle, form: form)))
                }
            }
            if !searchEntries.isEmpty { addToSearchIndex(searchEntries) }
        }
        // Another reload may have run while this one waited for the store (the model is reentrant at every
        // `await`): it may have filled the headlines and then been overwritten by this reload's older rows.
        // So the rows take whatever headline is cached for their summary, whether or not this call read any.
        var records = home.records
        var changed = false
        for index in records.indices {
            if let cached = headlines[records[index].id], let summary = summaries[records[index].id],
                isCurrent(cached.updatedAt, of: records[index].id, summary), records[index].headline != cached.text
            {
                records[index].headline = cached.text
                changed = true
            }
        }
        if changed { home.records = records }
        await loadDetails()
    }

    /// The record whose sheet is open, if any: the list observes every edit made in it, and its headline, details
    /// and search text are read once its sheet closes (``close(_:notice:outcome:record:)`` drops them), not after
    /// every key.
    var presentedRecordKey: String? {
        if case .record(let session, _)? = presented { return session.recordID.lowercased }
        return nil
    }

    /// Whether what was read of the record `key` as of `readAt` still stands for `summary`: read since it last
    /// changed, or the record is being edited in the open sheet (read again when it closes).
    func isCurrent(_ readAt: Date, of key: String, _ summary: RecordListSummary) -> Bool {
        readAt == summary.updatedAt || key == presentedRecordKey
    }

    /// The first answered text field tells records apart.
    static func headline(_ record: StoredRecord, form: FormDefinition?) -> String {
        guard let form else { return "" }
        // `answers` is built from the record's fields on each read (30,000 of them in a record of 5,000 defects):
        // read it once, not once per field.
        let answers = record.answers
        for field in form.allFields where field.kind == .text || field.kind == .multilineText {
            if let value = answers[field.id] {
                let shown = value.display(for: field).replacingOccurrences(of: "\n", with: " ")
                if !shown.isEmpty { return shown }
            }
        }
        return ""
    }

    /// The selected record's fields for the detail pane, read for it alone.
    func loadDetails() async {
        guard let item = home.selected, let summary = summaries[item.id] else {
            home.selectedDetails = []
            detailsShown = nil
            return
        }
        let preferred = try? await store.preferredLanguage()
        if let shown = detailsShown, shown.id == item.id, isCurrent(shown.updatedAt, of: item.id, summary), shown.review == summary.review,
           shown.language == preferred {
            recentlyRead = nil
            return
        }
        var details: [(label: String, value: String)] = []
        if let review = summary.review {
            details.append(("Review", review.display { $0.replacingOccurrences(of: "\n", with: " ") }))
        }
        // The record as the headlines just read it, when that is still its latest (a sheet just closed); else read.
        let read: StoredRecord? = if let recent = recentlyRead, recent.id == summary.id, recent.updatedAt == summary.updatedAt { recent } else {
            try? await store.record(summary.id, answers: .topLevel)
        }
        recentlyRead = nil
        if let record = read, let form = try? await store.form(record.form) {
            // In the device's language, and a label showing answers (`${name}`) shows this record's, as its sheet does.
            let language = preferred.flatMap { form.language(named: $0) }
            var state: FormState?
            let answers = record.answers
            for field in form.allFields {
                guard let value = answers[field.id] else { continue }
                var label = field.label.text(in: language)
                if FormText.mayReference(label) {
                    if state == nil {
                        state = FormState(form: form, answers: answers)
                        state?.language = language
                    }
                    label = state?.text(label, at: field.id) ?? label
                }
                details.append((label, value.display(for: field, language: language).replacingOccurrences(of: "\n", with: " ")))
            }
            let waiting = record.missingOnServer.count
            if waiting > 0 { details.append(("Attachments", "waiting for \(waiting) attachment\(waiting == 1 ? "" : "s") to reach the server")) }
        }
        home.selectedDetails = details
        detailsShown = (item.id, summary.updatedAt, summary.review, preferred)
    }

    // MARK: - Search

    /// `/` on the home screen: the search line takes the keyboard.
    func startSearch() {
        home.search = home.search ?? ""
        home.isEditingSearch = true
    }

    /// A key while the search line has the keyboard: typing narrows the list at once; Enter keeps the
    /// search and gives the keys back to the list; Esc clears it.
    func handleSearch(_ event: InputEvent) async -> AppStep {
        var text = home.search ?? ""
        switch event {
        case .character(let character): text.append(character)
        case .paste(let pasted): text += pasted.replacingOccurrences(of: "\n", with: " ")
        case .backspace: if !text.isEmpty { text.removeLast() }
        case .control("u"): text = ""
        case .enter, .down, .up, .tab:
            home.isEditingSearch = false
            if text.isEmpty { clearSearch() }
            return .redraw
        case .escape:
            clearSearch()
            return .redraw
        case .control("c"): return .exit(130)
        default: return .redraw
        }
        home.search = text
        home.selection = 0
        applySearch()
        return .redraw
    }

    func clearSearch() {
        home.search = nil
        home.isEditingSearch = false
        home.searchMatches = nil
        home.moveSelection(by: 0)
    }

    /// Narrows the list to records whose form title or any value contains the search text (any case),
    /// among the records indexed so far (the index fills in the background; results grow as it does).
    func applySearch() {
        guard let search = home.search, !search.isEmpty else {
            home.searchMatches = nil
            return
        }
        let needle = Array(search.lowercased().utf8)
        var matches = Set<String>()
        for (id, entry) in searchIndex where SearchText.contains(entry.text, needle) { matches.insert(id) }
        home.searchMatches = matches
        home.moveSelection(by: 0)
    }
}

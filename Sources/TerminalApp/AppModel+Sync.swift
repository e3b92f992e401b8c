import DraftStore
import Foundation
import FormModel
import SyncClient
import TerminalUI

extension AppModel {
    /// Connects the app to the server (when the device is logged in): `s` syncs, conflicts show in the list.
    public func attach(_ engine: SyncEngine) {
        syncEngine = engine
        home.status = statusText()
    }

    /// Whether a sync engine is attached.
    public var isLoggedIn: Bool { syncEngine != nil }

    /// Lets the app ask for a sync by itself (after a sheet closes, on `s`); the runner runs the service
    /// and hands its events to `handle(_:)`.
    public func attach(_ service: SyncService) {
        syncService = service
    }

    /// A sheet was completed or dismissed: what changed should reach the server now.
    func localChangeClosed() {
        guard let syncService else { return }
        Task { await syncService.syncNow(.localChange) }
    }

    /// Runs one sync; the actor keeps handling keys while it waits on the network, so editing goes on.
    /// - Parameters:
    ///   - announce: say what the sync did in the status line (the person asked for it); automatic
    ///     syncs only update "Synced … ago" unless something arrived or failed.
    ///   - progress: called with each step, for the status line.
    /// - Returns: whether the sync finished.
    @discardableResult
    public func runSync(announce: Bool = true, progress: @escaping @Sendable (SyncEvent) -> Void) async -> Bool {
        guard let engine = syncEngine, !syncing else { return false }
        syncStarted()
        do {
            let summary = try await engine.sync(progress: progress)
            await syncFinished(summary, announce: announce)
            return true
        } catch {
            await syncFailed(error, announce: announce)
            return false
        }
    }

    /// What the sync service reports: the status line follows it, the list is read again after each sync.
    public func handle(_ event: SyncServiceEvent) async {
        switch event {
        case .started:
            syncStarted()
        case .progress(let progress):
            show(progress)
        case .finished(let reason, let summary):
            await syncFinished(summary, announce: reason == .requested)
        case .failed(let reason, let error):
            await syncFailed(error, announce: reason == .requested)
        }
    }

    func syncStarted() {
        syncing = true
        home.status = statusText()
    }

    func syncFinished(_ summary: SyncSummary, announce: Bool) async {
        syncing = false
        lastSynced = Date()
        lastSyncFailure = nil
        await refreshList()
        if announce || summary.pulled > 0 || summary.conflicts > 0 { say("Synced: \(summary.description).") }
    }

    func syncFailed(_ error: any Error, announce: Bool) async {
        syncing = false
        lastSyncFailure = Self.shortReason(error)
        await refreshList()
        if announce { say("Sync stopped: \(error) Everything stays queued; the app tries again by itself.") }
    }

    /// A few words on why a sync failed, for the standing status line.
    static func shortReason(_ error: Error) -> String {
        let text = "\(error)"
        let first = text.split(separator: ".", maxSplits: 1).first.map(String.init) ?? text
        return first.count > 60 ? String(first.prefix(59)) + "…" : first
    }

    /// Shows a sync step in the status line as a progress bar.
    public func show(_ event: SyncEvent) {
        var text: String
        switch event.phase {
        case .forms: text = "Syncing: fetching forms…"
        case .pulling: text = "Syncing: pulled \(event.pulled) records…"
        case .pushing:
            let total = max(event.pushTotal ?? 0, 1)
            let filled = min(20, event.pushed * 20 / total)
            text = "Syncing: pushing [" + String(repeating: "█", count: filled) + String(repeating: "·", count: 20 - filled) + "] \(event.pushed)/\(event.pushTotal ?? 0)"
        case .uploading:
            let total = max(event.uploadBytesTotal, 1)
            let filled = Int(min(20, event.uploadedBytes * 20 / total))
            text = "Syncing: uploading [" + String(repeating: "█", count: filled) + String(repeating: "·", count: 20 - filled) + "] \(event.uploaded)/\(event.uploadTotal ?? 0) attachments, \(AttachmentReference.formatSize(event.uploadedBytes))/\(AttachmentReference.formatSize(event.uploadBytesTotal))"
        case .downloading: text = "Syncing: downloaded \(event.downloaded)/\(event.downloadTotal ?? 0) attachments…"
        case .done: text = "Syncing: done"
        }
        if let retry = event.retrying { text += " (\(retry))" }
        home.status = text
    }

    /// `c` on a record in conflict: a sheet with one choice per conflicting field — this device's value or
    /// the server's, each with who wrote it. Resolving is an ordinary edit that syncs.
    func openConflicts() async {
        guard let recordID = selectedID else { return }
        do {
            let open = try await store.conflicts(openOnly: true, record: recordID)
            guard !open.isEmpty else {
                say("This record has no open conflicts.")
                return
            }
            let record = try await store.record(recordID)
            let form = try await store.form(id: record?.form.id ?? "", version: record?.form.version)
            var fields: [FieldDefinition] = []
            for conflict in open {
                let field = form.field(conflict.fieldID)
                let show: (AnswerValue?) -> String = { $0?.display(for: field) ?? "(empty)" }
                fields.append(FieldDefinition(
                    id: "c\(conflict.id)", kind: .singleChoice, label: field?.label ?? LocalizedText(conflict.fieldID), hint: "\(conflict.policy) conflict",
                    choices: [
                        Choice(value: "mine", label: "Mine: \(show(conflict.mine)) (this device)"),
                        Choice(value: "theirs", label: "Theirs: \(show(conflict.theirs)) (\(conflict.theirsDevice ?? "the server"))"),
                    ]))
            }
            let sheet = FormDefinition(
                id: BuiltInSheets.conflictsID, title: "Resolve Conflicts", presentation: .formSheet, completionLabel: "Resolve",
                pages: [FormPage(id: recordID.lowercased, fields: fields)])
            present(.utility(SheetState(form: sheet, answers: [:])), id: BuiltInSheets.conflictsID)
        } catch {
            say("\(error)")
        }
    }

    /// Resolves every conflict the person chose a side for; the others stay open.
    func resolveConflicts(_ sheet: SheetState) async {
        guard let recordID = UUID(text: sheet.form.pages[0].id) else { return }
        var resolved = 0
        do {
            let open = try await store.conflicts(openOnly: true, record: recordID)
            for conflict in open {
                guard case .choice(let side)? = sheet.answers["c\(conflict.id)"] else { continue }
                _ = try await store.resolveConflict(record: recordID, field: conflict.fieldID, choice: side == "mine" ? .mine : .theirs)
                resolved += 1
            }
            await refreshList()
            say("Resolved \(resolved) conflict\(resolved == 1 ? "" : "s"); the next sync sends the choice.")
            localChangeClosed()
        } catch {
            say("\(error)")
        }
    }
}

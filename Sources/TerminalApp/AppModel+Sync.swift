import DraftStore
import Foundation
import FormModel
import SyncClient
import TerminalUI

extension AppModel {
    /// Connects the app to the server (when the device is logged in): `s` syncs, conflicts show in the list.
    public func attach(_ engine: SyncEngine) {
        syncEngine = engine
    }

    /// Runs one sync; the actor keeps handling keys while it waits on the network, so editing goes on.
    /// - Parameter progress: called with each step, for the status line.
    public func runSync(progress: @escaping @Sendable (SyncEvent) -> Void) async {
        guard let engine = syncEngine, !syncing else { return }
        syncing = true
        defer { syncing = false }
        do {
            let summary = try await engine.sync(progress: progress)
            await reload()
            home.status = "Synced: \(summary.description). " + home.status
        } catch {
            await reload()
            home.status = "Sync stopped: \(error) Everything stays queued."
        }
    }

    /// Shows a sync step in the status line as a progress bar.
    public func show(_ event: SyncEvent) {
        switch event.phase {
        case .forms: home.status = "Syncing: fetching forms…"
        case .pulling: home.status = "Syncing: pulled \(event.pulled) records…"
        case .pushing:
            let total = max(event.pushTotal ?? 0, 1)
            let filled = min(20, event.pushed * 20 / total)
            home.status = "Syncing: pushing [" + String(repeating: "█", count: filled) + String(repeating: "·", count: 20 - filled) + "] \(event.pushed)/\(event.pushTotal ?? 0)"
        case .done: home.status = "Syncing: done"
        }
        if let retry = event.retrying { home.status += " (\(retry))" }
    }

    /// `c` on a record in conflict: a sheet with one choice per conflicting field — this device's value or
    /// the server's, each with who wrote it. Resolving is an ordinary edit that syncs.
    func openConflicts() async {
        guard let index = selectedIndex else { return }
        let recordID = recordIDs[index]
        do {
            let open = try await store.conflicts(openOnly: true, record: recordID)
            guard !open.isEmpty else {
                home.status = "This record has no open conflicts."
                return
            }
            let record = try await store.record(recordID)
            let form = try await store.form(id: record?.formID ?? "", version: record?.formVersion)
            var fields: [FieldDefinition] = []
            for conflict in open {
                let field = form.field(conflict.fieldID)
                let show: (AnswerValue?) -> String = { $0?.display(for: field) ?? "(empty)" }
                fields.append(FieldDefinition(
                    id: "c\(conflict.id)", kind: .singleChoice, label: field?.label ?? conflict.fieldID, hint: "\(conflict.policy) conflict",
                    choices: [
                        Choice(value: "mine", label: "Mine: \(show(conflict.mine)) (this device)"),
                        Choice(value: "theirs", label: "Theirs: \(show(conflict.theirs)) (\(conflict.theirsDevice ?? "the server"))"),
                    ]))
            }
            let sheet = FormDefinition(
                id: BuiltInSheets.conflictsID, title: "Resolve Conflicts", presentation: .formSheet, completionLabel: "Resolve",
                pages: [FormPage(id: recordID.uuidString.lowercased(), fields: fields)])
            present(.utility(SheetState(form: sheet, answers: [:])), id: BuiltInSheets.conflictsID)
        } catch {
            home.status = "\(error)"
        }
    }

    /// Resolves every conflict the person chose a side for; the others stay open.
    func resolveConflicts(_ sheet: SheetState) async {
        guard let recordID = UUID(uuidString: sheet.form.pages[0].id) else { return }
        var resolved = 0
        do {
            let open = try await store.conflicts(openOnly: true, record: recordID)
            for conflict in open {
                guard case .choice(let side)? = sheet.answers["c\(conflict.id)"] else { continue }
                _ = try await store.resolveConflict(record: recordID, field: conflict.fieldID, choice: side == "mine" ? .mine : .theirs)
                resolved += 1
            }
            await reload()
            home.status = "Resolved \(resolved) conflict\(resolved == 1 ? "" : "s"); the next sync sends the choice. " + home.status
        } catch {
            home.status = "\(error)"
        }
    }
}

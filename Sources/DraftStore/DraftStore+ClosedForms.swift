import FormModel
import GRDB

extension DraftStore {
    /// The forms the project's admin closed to new records, as the server listed them at the last sync that
    /// fetched the forms (`GET …/forms`, `closedForms`). The server refuses a new record of such a form; a
    /// record already sent may still be edited. Kept in the device database.
    public func closedForms() async throws -> Set<String> {
        try await read(doing: "reading the closed forms") { db in
            let value = try String.fetchOne(db, sql: "SELECT value FROM device_settings WHERE name = 'closed-forms'") ?? ""
            return Set(value.split(separator: "\n").map(String.init))
        }
    }

    /// Records the forms closed to new records (see ``closedForms()``), replacing what was recorded.
    public func setClosedForms(_ formIDs: Set<String>) async throws {
        // Form ids are identifiers (FormChecker): they hold no line break, so one per line reads back exactly.
        let value = formIDs.sorted().joined(separator: "\n")
        try await write(doing: "recording the closed forms") { db in
            try db.execute(
                sql: "INSERT INTO device_settings (name, value) VALUES ('closed-forms', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                arguments: [value])
        }
    }
}

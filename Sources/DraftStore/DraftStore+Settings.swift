import FormModel
import GRDB

extension DraftStore {
    /// The language forms are shown in on this device, as it was set (`fr`, `Français`, `Français (fr)`); nil
    /// for each form's default language. Kept in the device database; a new or resumed sheet starts in it when
    /// its form is written in it (`FormDefinition.language(named:)`), and `FormSession.setLanguage(_:)` changes
    /// one sheet's language without changing the setting.
    public func preferredLanguage() async throws -> String? {
        try await read(doing: "reading the device's language") { db in
            try String.fetchOne(db, sql: "SELECT value FROM device_settings WHERE name = 'language'")
        }
    }

    /// Sets the device's language (see `preferredLanguage()`); nil or an empty text goes back to each form's
    /// default.
    public func setPreferredLanguage(_ language: String?) async throws {
        let value = language?.trimmingCharacters(in: .whitespaces)
        try await write(doing: "setting the device's language") { db in
            if let value, !value.isEmpty {
                try db.execute(sql: "INSERT INTO device_settings (name, value) VALUES ('language', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                               arguments: [value])
            } else {
                try db.execute(sql: "DELETE FROM device_settings WHERE name = 'language'")
            }
        }
    }
}

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

    /// Whether the server said this device was signed out (its project's admin revoked it): kept in the device
    /// database so that every program on this home (`fieldsheet status`, the app) can say so while offline,
    /// until a login or a sync succeeds again. What waits to be sent stays on the device whatever this says.
    public func isSignedOut() async throws -> Bool {
        try await read(doing: "reading whether the device was signed out") { db in
            try String.fetchOne(db, sql: "SELECT value FROM device_settings WHERE name = 'signedOut'") != nil
        }
    }

    /// Notes (or clears) that the server signed this device out (see `isSignedOut()`).
    public func setSignedOut(_ signedOut: Bool) async throws {
        try await write(doing: "noting that the device was signed out") { db in
            if signedOut {
                try db.execute(sql: "INSERT INTO device_settings (name, value) VALUES ('signedOut', '1') ON CONFLICT (name) DO NOTHING")
            } else {
                try db.execute(sql: "DELETE FROM device_settings WHERE name = 'signedOut'")
            }
        }
    }
}

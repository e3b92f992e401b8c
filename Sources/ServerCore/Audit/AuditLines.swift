import FormModel
import Foundation
import ServerStorage

/// The audit log as JSON Lines, one object an entry: `id`, `at` (ISO 8601, UTC, milliseconds), `actor`,
/// `address` (or null), `project` (its name, or null for an act of no project), `action`, `subject` and
/// `detail` (an object of strings, keys in order). The console's download and `fieldsheet-server audit` both
/// write it, so a script reads either the same way.
public enum AuditLines {
    /// One entry's line, without its line feed.
    public static func line(_ entry: AuditEntry, project: String?) -> [UInt8] {
        var line = JSONWriter(capacity: 256)
        line.beginObject()
        line.key("id"); line.int(entry.id)
        line.key("at"); line.string(iso(entry.at))
        line.key("actor"); line.string(entry.event.actor)
        line.key("address"); if let address = entry.event.address { line.string(address) } else { line.null() }
        line.key("project"); if let project { line.string(project) } else { line.null() }
        line.key("action"); line.string(entry.event.action.rawValue)
        line.key("subject"); line.string(entry.event.subject)
        line.key("detail")
        line.beginObject()
        for key in entry.event.detail.keys.sorted() {
            line.key(key)
            line.string(entry.event.detail[key] ?? "")
        }
        line.endObject()
        line.endObject()
        return line.bytes
    }

    /// Every entry `query` matches, newest first, read from `storage` 500 at a time (by keyset, so the last
    /// page costs what the first does) and handed to `body` page by page.
    public static func read(
        _ query: AuditQuery, from storage: some AuditStorage, _ body: ([AuditEntry]) async throws -> Void
    ) async throws {
        var query = query
        query.limit = 500
        while true {
            let entries = try await storage.auditLog(query)
            try await body(entries)
            guard entries.count == query.limit, let last = entries.last else { return }
            query.before = last.id
        }
    }

    /// A UTC day written `yyyy-MM-dd`, as the audit filters take it; nil when `text` is not one.
    public static func day(_ text: String) -> Date? { ConsoleTime.day(text) }

    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

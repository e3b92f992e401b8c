import Foundation

/// The audit log: one entry per administrative act, appended and never changed (docs/audit-log.md).
///
/// Both backends make the table append-only in the database itself (triggers refuse UPDATE and DELETE), so
/// nothing in the product, nor a slip in it, can edit or remove an entry.
public protocol AuditStorage: Sendable {
    /// Appends an entry; its id and time are the log's.
    @discardableResult
    func recordAudit(_ event: AuditEvent) async throws -> AuditEntry
    /// Entries matching the query, newest first.
    func auditLog(_ query: AuditQuery) async throws -> [AuditEntry]
}

/// What an administrative act was. Stored as its raw value; the constants below and in extensions elsewhere
/// name the acts the product records.
public struct AuditAction: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// A person signed in to the console.
    public static let signIn = AuditAction("sign-in")
    /// A sign-in was refused (the name tried is the entry's actor).
    public static let signInFailed = AuditAction("sign-in.failed")
    /// A project was created.
    public static let projectCreated = AuditAction("project.created")
    /// A form or a new version of it was published.
    public static let formPublished = AuditAction("form.published")
    /// A record was reviewed (approved, sent back, …).
    public static let recordReviewed = AuditAction("record.reviewed")
    /// A conflict was resolved by a person.
    public static let conflictResolved = AuditAction("conflict.resolved")
    /// Records were exported.
    public static let exported = AuditAction("export")
}

/// An act to record: who did it, from where, in which project, what, to what.
public struct AuditEvent: Sendable, Hashable {
    /// The actor's name shown in the log: the user's name, the name tried in a failed sign-in, or
    /// ``AuditEvent/commandLine`` for the server's own administration commands.
    public var actor: String
    /// The user, when the actor is one.
    public var actorID: Int64?
    /// The client's address (as the server sees it behind its trusted proxies); nil for the command line.
    public var address: String?
    /// The project the act was in, when any.
    public var projectID: Int64?
    public var action: AuditAction
    /// What the act was done to: a user's name, a device, `form@version`, a record id; empty when nothing.
    public var subject: String
    /// The rest of what is worth knowing (a role granted, how many records), as text values.
    public var detail: [String: String]

    /// The actor of acts made with `fieldsheet-server` on the server itself.
    public static let commandLine = "command line"

    public init(
        actor: String, actorID: Int64? = nil, address: String? = nil, projectID: Int64? = nil, action: AuditAction,
        subject: String = "", detail: [String: String] = [:]
    ) {
        self.actor = actor
        self.actorID = actorID
        self.address = address
        self.projectID = projectID
        self.action = action
        self.subject = subject
        self.detail = detail
    }

    /// The detail as the log stores it: a JSON object with the keys sorted.
    public var storedDetail: String {
        let data = (try? JSONSerialization.data(withJSONObject: detail, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The detail read back from its stored JSON (an entry whose detail is not a JSON object of strings reads as empty).
    public static func detail(stored: String) -> [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(stored.utf8))) as? [String: String] ?? [:]
    }
}

/// An entry of the audit log.
public struct AuditEntry: Sendable, Hashable, Identifiable {
    public var id: Int64
    public var at: Date
    public var event: AuditEvent

    public init(id: Int64, at: Date, event: AuditEvent) {
        self.id = id
        self.at = at
        self.event = event
    }
}

/// Which entries to read: all conditions given must hold. Pages go backwards in time by keyset (`before` the
/// oldest id of the previous page).
public struct AuditQuery: Sendable, Hashable {
    /// Entries of this project only; nil for every project and none (the server admin's view).
    public var projectID: Int64?
    public var actor: String?
    public var action: AuditAction?
    public var since: Date?
    public var until: Date?
    /// Entries with an id below this one.
    public var before: Int64?
    public var limit: Int

    public init(
        projectID: Int64? = nil, actor: String? = nil, action: AuditAction? = nil, since: Date? = nil, until: Date? = nil,
        before: Int64? = nil, limit: Int = 100
    ) {
        self.projectID = projectID
        self.actor = actor
        self.action = action
        self.since = since
        self.until = until
        self.before = before
        self.limit = limit
    }
}

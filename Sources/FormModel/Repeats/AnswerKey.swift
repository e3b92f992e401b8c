import Foundation

/// Where an answer lives in a record's fields: a top-level field (`site`), or a field of a repeat instance
/// keyed by the group, the instance's stable id and the field (`defects/7c1e…/severity`; nested repeats go on:
/// `defects/7c1e…/actions/90ab…/what`). Each instance also has `@position` (its order) and `@removed` (its
/// tombstone) fields, merged like any other field.
public struct AnswerKey: Hashable, Sendable, CustomStringConvertible {
    /// One repeat instance on the way to the field.
    public struct Step: Hashable, Sendable {
        /// The id of the repeat field.
        public var group: String
        /// The instance's stable id.
        public var instance: String

        /// The step into instance `instance` of the repeat `group`.
        public init(group: String, instance: String) {
            self.group = group
            self.instance = instance
        }
    }

    /// The instance field holding an instance's order (an integer; ties go to the instance id).
    public static let position = "@position"
    /// The instance field holding an instance's tombstone (`true` once removed; `false` when restored).
    public static let removed = "@removed"
    /// The key under which a submitted record of a form that saves to an entity list keeps what it did to
    /// the entity (SyncCore's `RecordEntityChange`, as text). Keys starting `__` are reserved; this is the only one.
    public static let entityChange = "__entity"

    /// The instances from the outermost in, empty for a top-level field.
    public var steps: [Step]
    /// The field id, or `@position` / `@removed`.
    public var field: String

    /// The key of `field` inside the instances `steps`, outermost first; a top-level field when there are none.
    public init(steps: [Step] = [], field: String) {
        self.steps = steps
        self.field = field
    }

    /// Reads a record field key; nil when it is not of the shape `group/instance/…/field`.
    public init?(_ key: String) {
        guard key.utf8.contains(UInt8(ascii: "/")) else {
            guard !key.isEmpty, !key.hasPrefix("@") else { return nil }
            self.init(field: key)
            return
        }
        // Split on the bytes (a record of 5,000 instances has 30,000 keys to read as it opens), not on characters.
        let parts = key.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count % 2 == 1, parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        var steps: [Step] = []
        steps.reserveCapacity(parts.count / 2)
        var index = 0
        while index + 1 < parts.count {
            guard parts[index].first != UInt8(ascii: "@") else { return nil }
            steps.append(Step(group: String(Substring(parts[index])), instance: String(Substring(parts[index + 1]))))
            index += 2
        }
        self.init(steps: steps, field: String(Substring(parts[parts.count - 1])))
    }

    /// The key as stored.
    public var key: String {
        steps.isEmpty ? field : instancePrefix + "/" + field
    }

    /// The key as stored (`key`).
    public var description: String { key }

    /// `defects/7c1e…` (the innermost instance), or "" for a top-level field.
    public var instancePrefix: String {
        steps.map { "\($0.group)/\($0.instance)" }.joined(separator: "/")
    }

    /// Whether this is an instance's `@position` or `@removed`.
    public var isInstanceMeta: Bool { field == Self.position || field == Self.removed }

    /// The key of `field` inside the instance at `prefix` ("" for top level).
    public static func key(_ field: String, in prefix: String) -> String {
        prefix.isEmpty ? field : prefix + "/" + field
    }

    /// A new instance id, as a device makes one: a lowercase UUID.
    public static func newInstanceID() -> String {
        UUID().lowercased
    }
}

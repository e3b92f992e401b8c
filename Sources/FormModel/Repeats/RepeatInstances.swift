/// One instance of a repeat in a record.
public struct RepeatInstance: Hashable, Sendable {
    /// Its stable id (a UUID made by the device that added it).
    public var id: String
    /// The key prefix of its fields: `defects/<id>` (nested: `defects/<id>/actions/<id>`).
    public var prefix: String
    /// Its order among the group's instances (ties go to the id).
    public var position: Int
    /// Whether it is removed (its `@removed` is true).
    public var removed: Bool
}

/// The instances of every repeat in a set of answers, found from the keys: any key under `group/<id>/` makes an
/// instance exist, `@position` orders it and `@removed` tombstones it.
///
/// Groups are keyed by the prefix their instances' keys start with: `defects` at the top level,
/// `defects/<id>/actions` inside an instance.
public struct RepeatInstances: Sendable, Hashable {
    /// Every instance (removed ones too) by group key, in order.
    public private(set) var groups: [String: [RepeatInstance]] = [:]

    /// No instances.
    public init() {}

    /// Finds the instances in `answers`.
    ///
    /// Most keys of a large record are fields of an instance already found (`items/<id>/cost` after
    /// `items/<id>/name`): those are recognised by their instance prefix alone, without parsing the key or
    /// building strings, so a record of 200 instances × 10 fields reads its 2,200 keys in one cheap pass.
    public init(answers: [String: AnswerValue]) {
        var found: [String: [String: RepeatInstance]] = [:]
        var known = Set<Substring>()
        for (key, value) in answers {
            guard let innermost = Self.instancePrefix(of: key) else { continue }
            if known.contains(innermost), !Self.isInstanceMeta(key, after: innermost) { continue }
            guard let path = AnswerKey(key) else { continue }
            known.insert(innermost)
            var prefix = ""
            for (index, step) in path.steps.enumerated() {
                let group = AnswerKey.key(step.group, in: prefix)
                prefix = group + "/" + step.instance
                var instance = found[group]?[step.instance] ?? RepeatInstance(id: step.instance, prefix: prefix, position: .max, removed: false)
                if index == path.steps.count - 1 {
                    switch (path.field, value) {
                    case (AnswerKey.position, .integer(let position)): instance.position = position
                    case (AnswerKey.removed, .boolean(let removed)): instance.removed = removed
                    default: break
                    }
                }
                found[group, default: [:]][step.instance] = instance
            }
        }
        groups = found.mapValues { $0.values.sorted(by: Self.ordered) }
    }

    /// `items/<id>` of `items/<id>/cost`: the key up to its last `/`; nil for a top-level key.
    static func instancePrefix(of key: String) -> Substring? {
        guard let slash = key.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        return key[..<slash]
    }

    /// Whether the field after `prefix` in `key` is `@position` or `@removed`.
    static func isInstanceMeta(_ key: String, after prefix: Substring) -> Bool {
        let field = key[key.utf8.index(after: prefix.endIndex)...]
        return field.utf8.first == UInt8(ascii: "@") && (field == AnswerKey.position || field == AnswerKey.removed)
    }

    static func ordered(_ left: RepeatInstance, _ right: RepeatInstance) -> Bool {
        (left.position, left.id) < (right.position, right.id)
    }

    /// The instances of `group` inside the instance at `parent` ("" for top level) that are not removed, in order.
    public func live(_ group: String, in parent: String = "") -> [RepeatInstance] {
        (groups[AnswerKey.key(group, in: parent)] ?? []).filter { !$0.removed }
    }

    /// Every instance of `group` inside `parent`, removed ones too, in order.
    public func all(_ group: String, in parent: String = "") -> [RepeatInstance] {
        groups[AnswerKey.key(group, in: parent)] ?? []
    }

    /// The instance whose prefix is `prefix`, if any.
    public func instance(_ prefix: String) -> RepeatInstance? {
        guard let slash = prefix.lastIndex(of: "/") else { return nil }
        let group = String(prefix[..<slash])
        let id = String(prefix[prefix.index(after: slash)...])
        return groups[group]?.first { $0.id == id }
    }

    /// The position a new instance appended to `group` in `parent` takes.
    public func nextPosition(_ group: String, in parent: String = "") -> Int {
        let positions = all(group, in: parent).map(\.position).filter { $0 != .max }
        return (positions.max() ?? 0) + 1
    }

    /// Notes a change of `key` to `value` (nil: cleared), keeping the groups in order.
    public mutating func note(_ key: String, _ value: AnswerValue?) {
        // An answer of an instance already listed changes nothing here: only a new instance, its order or
        // its removal does.
        guard let instancePrefix = Self.instancePrefix(of: key) else { return }
        if !Self.isInstanceMeta(key, after: instancePrefix), instance(String(instancePrefix)) != nil { return }
        guard let path = AnswerKey(key) else { return }
        var prefix = ""
        for (index, step) in path.steps.enumerated() {
            let group = AnswerKey.key(step.group, in: prefix)
            prefix = group + "/" + step.instance
            var list = groups[group] ?? []
            var instance: RepeatInstance
            if let existing = list.firstIndex(where: { $0.id == step.instance }) {
                instance = list.remove(at: existing)
            } else {
                instance = RepeatInstance(id: step.instance, prefix: prefix, position: .max, removed: false)
            }
            if index == path.steps.count - 1 {
                switch (path.field, value) {
                case (AnswerKey.position, .integer(let position)?): instance.position = position
                case (AnswerKey.position, _): instance.position = .max
                case (AnswerKey.removed, .boolean(let removed)?): instance.removed = removed
                case (AnswerKey.removed, _): instance.removed = false
                default: break
                }
            }
            let place = list.firstIndex { Self.ordered(instance, $0) } ?? list.count
            list.insert(instance, at: place)
            groups[group] = list
        }
    }
}

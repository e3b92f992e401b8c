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
    /// Every instance by its prefix (`defects/<id>`), so finding one costs the same in a record of 5,000.
    private var byPrefix: [String: RepeatInstance] = [:]
    /// How many instances of each group are removed: a group with none needs no filtering to list its live ones.
    private var removedCounts: [String: Int] = [:]

    /// No instances.
    public init() {}

    /// Finds the instances in `answers`.
    ///
    /// Most keys of a large record are fields of an instance already found (`items/<id>/cost` after
    /// `items/<id>/name`): those are recognised by their instance prefix alone, without parsing the key or
    /// building strings. An instance's prefix is read once, when it is first met (its `@position` and
    /// `@removed` then only update it), and the instances are kept by prefix as they are found, so a record of
    /// 5,000 instances reads its keys in one pass and sorts each group once.
    public init(answers: [String: AnswerValue]) {
        // Keyed by the prefix as it stands in the answer key: no string is built for a key already seen.
        var found: [Substring: RepeatInstance] = [:]
        for (key, value) in answers {
            guard let innermost = Self.instancePrefix(of: key) else { continue }
            let meta = Self.isInstanceMeta(key, after: innermost)
            // One look-up for a key of an instance met already (most keys); a new one is looked up again after
            // it is added, and only for its `@position` or `@removed`.
            var index = found.index(forKey: innermost)
            if index == nil {
                guard Self.isField(of: key, after: innermost), Self.add(innermost, to: &found), meta else { continue }
                index = found.index(forKey: innermost)
            }
            guard meta, let index else { continue }
            switch (key[key.utf8.index(after: innermost.endIndex)...], value) {
            case (Substring(AnswerKey.position), .integer(let position)): found.values[index].position = position
            case (Substring(AnswerKey.removed), .boolean(let removed)): found.values[index].removed = removed
            default: break
            }
        }
        var lists: [Substring: [RepeatInstance]] = [:]
        byPrefix.reserveCapacity(found.count)
        for (prefix, instance) in found {
            // `defects/<id>` belongs to the group `defects`: the prefix up to its last `/`.
            guard let slash = prefix.utf8.lastIndex(of: UInt8(ascii: "/")) else { continue }
            lists[prefix[..<slash], default: []].append(instance)
            byPrefix[instance.prefix] = instance
        }
        groups.reserveCapacity(lists.count)
        for (group, list) in lists {
            groups[String(group)] = list.sorted(by: Self.ordered)
            let removed = list.count { $0.removed }
            if removed > 0 { removedCounts[String(group)] = removed }
        }
    }

    /// Whether what follows `prefix` in `key` is a field name (`cost`, `@position`): one non-empty part.
    static func isField(of key: String, after prefix: Substring) -> Bool {
        let field = key.utf8[key.utf8.index(after: prefix.endIndex)...]
        return !field.isEmpty && !field.contains(UInt8(ascii: "/"))
    }

    /// Adds the instance at `prefix` (`defects/<id>`, nested `defects/<id>/actions/<id>`) and every instance
    /// around it to `found`, unless already there; false when `prefix` is not of that shape (what
    /// `AnswerKey` refuses: an odd part, an empty part, a group named `@…`).
    static func add(_ prefix: Substring, to found: inout [Substring: RepeatInstance]) -> Bool {
        let slash = UInt8(ascii: "/")
        let parts = prefix.utf8.split(separator: slash, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts.count % 2 == 0, parts.allSatisfy({ !$0.isEmpty }) else { return false }
        for group in stride(from: 0, to: parts.count, by: 2) where parts[group].first == UInt8(ascii: "@") { return false }
        for instance in stride(from: 1, to: parts.count, by: 2) {
            let outer = prefix[..<parts[instance].endIndex]
            if found[outer] == nil {
                found[outer] = RepeatInstance(id: String(Substring(parts[instance])), prefix: String(outer), position: .max, removed: false)
            }
        }
        return true
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

    /// The index in the ordered `list` where `instance` belongs: the first element it orders before.
    static func place(of instance: RepeatInstance, in list: [RepeatInstance]) -> Int {
        var low = 0, high = list.count
        while low < high {
            let middle = (low + high) / 2
            if ordered(instance, list[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// The instances of `group` inside the instance at `parent` ("" for top level) that are not removed, in order.
    public func live(_ group: String, in parent: String = "") -> [RepeatInstance] {
        let key = AnswerKey.key(group, in: parent)
        let list = groups[key] ?? []
        return removedCounts[key] == nil ? list : list.filter { !$0.removed }
    }

    /// How many instances of `group` inside `parent` are not removed.
    public func liveCount(_ group: String, in parent: String = "") -> Int {
        let key = AnswerKey.key(group, in: parent)
        return (groups[key]?.count ?? 0) - (removedCounts[key] ?? 0)
    }

    /// The `number`th (from 1) instance of `group` inside `parent` that is not removed; nil past the last.
    /// Costs nothing in proportion to the group's size unless some of its instances are removed.
    public func live(_ group: String, in parent: String = "", number: Int) -> RepeatInstance? {
        let key = AnswerKey.key(group, in: parent)
        guard number >= 1, let list = groups[key] else { return nil }
        if removedCounts[key] == nil { return number <= list.count ? list[number - 1] : nil }
        var seen = 0
        for instance in list where !instance.removed {
            seen += 1
            if seen == number { return instance }
        }
        return nil
    }

    /// Every instance of `group` inside `parent`, removed ones too, in order.
    public func all(_ group: String, in parent: String = "") -> [RepeatInstance] {
        groups[AnswerKey.key(group, in: parent)] ?? []
    }

    /// The instance whose prefix is `prefix`, if any.
    public func instance(_ prefix: String) -> RepeatInstance? {
        byPrefix[prefix]
    }

    /// The position a new instance appended to `group` in `parent` takes.
    public func nextPosition(_ group: String, in parent: String = "") -> Int {
        // The list is ordered by position, and instances without one (`.max`) come last.
        let highest = all(group, in: parent).last { $0.position != .max }?.position
        return (highest ?? 0) + 1
    }

    /// Notes a change of `key` to `value` (nil: cleared), keeping the groups in order.
    public mutating func note(_ key: String, _ value: AnswerValue?) {
        // An answer of an instance already listed changes nothing here: only a new instance, its order or
        // its removal does.
        guard let instancePrefix = Self.instancePrefix(of: key) else { return }
        if !Self.isInstanceMeta(key, after: instancePrefix), byPrefix[String(instancePrefix)] != nil { return }
        guard let path = AnswerKey(key) else { return }
        var prefix = ""
        for (index, step) in path.steps.enumerated() {
            let group = AnswerKey.key(step.group, in: prefix)
            prefix = group + "/" + step.instance
            let existing = byPrefix[prefix]
            var instance = existing ?? RepeatInstance(id: step.instance, prefix: prefix, position: .max, removed: false)
            if index == path.steps.count - 1 {
                switch (path.field, value) {
                case (AnswerKey.position, .integer(let position)?): instance.position = position
                case (AnswerKey.position, _): instance.position = .max
                case (AnswerKey.removed, .boolean(let removed)?): instance.removed = removed
                case (AnswerKey.removed, _): instance.removed = false
                default: break
                }
            }
            if instance == existing { continue }
            var list = groups.removeValue(forKey: group) ?? []
            if let existing {
                // Ordered by (position, id), which identify it: found by the same binary search.
                let at = Self.place(of: existing, in: list) - 1
                if at >= 0, list[at].prefix == prefix { list.remove(at: at) }
                else if let at = list.firstIndex(where: { $0.prefix == prefix }) { list.remove(at: at) }
                if existing.removed { removedCounts[group, default: 0] -= 1 }
            }
            list.insert(instance, at: Self.place(of: instance, in: list))
            groups[group] = list
            byPrefix[prefix] = instance
            if instance.removed { removedCounts[group, default: 0] += 1 }
            if removedCounts[group] == 0 { removedCounts[group] = nil }
        }
    }
}

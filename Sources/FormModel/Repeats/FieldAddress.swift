/// A field or instance as a person or a script names it: `site`, `defects[2].severity` (the second live
/// instance, counting from 1), `defects[2].actions[1].what`, or an instance alone: `defects[2]`.
public struct FieldAddress: Sendable, Hashable, CustomStringConvertible {
    /// One instance on the way to the field: a repeat and the instance's number.
    public struct Step: Sendable, Hashable {
        /// The id of the repeat field.
        public var group: String
        /// 1-based, among the live instances in order.
        public var index: Int
    }

    /// The instances from the outermost in; none for a top-level field.
    public var steps: [Step]
    /// The field, or nil for an address of an instance.
    public var field: String?

    /// Why an address cannot be read.
    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        /// Why the text is not an address, and how one is written.
        public var description: String
    }

    /// Reads an address: `field`, `group[n].field` or `group[n]`, with n from 1.
    ///
    /// - Throws: `FieldAddress.SyntaxError` when the text has another shape or an instance number below 1.
    public init(_ text: String) throws(SyntaxError) {
        var steps: [Step] = []
        var field: String?
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        for (offset, part) in parts.enumerated() {
            guard let open = part.firstIndex(of: "[") else {
                guard offset == parts.count - 1, Self.isName(part) else {
                    throw SyntaxError(description: "\"\(text)\" is not a field address: write field, group[2].field or group[2] (instances count from 1).")
                }
                field = String(part)
                continue
            }
            let name = part[..<open]
            guard part.hasSuffix("]"), Self.isName(name), let index = Int(part[part.index(after: open)..<part.index(before: part.endIndex)]), index >= 1 else {
                throw SyntaxError(description: "\"\(text)\" is not a field address: \"\(part)\" should be a repeat and an instance number from 1, like defects[2].")
            }
            steps.append(Step(group: String(name), index: index))
        }
        self.steps = steps
        self.field = field
    }

    static func isName(_ text: Substring) -> Bool {
        guard let first = text.first, first.isLetter || first == "_" else { return false }
        return text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }

    /// The address as written (`defects[2].severity`).
    public var description: String {
        (steps.map { "\($0.group)[\($0.index)]" } + (field.map { [$0] } ?? [])).joined(separator: ".")
    }
}

extension FormState {
    /// How a person reads the place of `key`: "Defect 2 › Severity" (an instance's number among the live ones).
    public func describe(_ key: String) -> String {
        guard let path = AnswerKey(key) else { return key }
        var parts: [String] = []
        var parent = ""
        for step in path.steps {
            let noun = logic.fields.byID[step.group]?.instanceNoun.text(in: language) ?? step.group
            let live = instances.live(step.group, in: parent)
            let number = live.firstIndex { $0.id == step.instance }.map { String($0 + 1) } ?? "(removed, \(step.instance.prefix(8)))"
            parts.append("\(noun) \(number)")
            parent = AnswerKey.key(step.group, in: parent) + "/" + step.instance
        }
        if !path.isInstanceMeta { parts.append(logic.fields.byID[path.field]?.label.text(in: language) ?? path.field) }
        return parts.joined(separator: " › ")
    }

    /// The address (`defects[2].severity`) of a key in a live instance; nil when an instance on the way is removed.
    public func address(of key: String) -> String? {
        guard let path = AnswerKey(key) else { return nil }
        var parts: [String] = []
        var parent = ""
        for step in path.steps {
            guard let index = instances.live(step.group, in: parent).firstIndex(where: { $0.id == step.instance }) else { return nil }
            parts.append("\(step.group)[\(index + 1)]")
            parent = AnswerKey.key(step.group, in: parent) + "/" + step.instance
        }
        if !path.isInstanceMeta { parts.append(path.field) }
        return parts.joined(separator: ".")
    }
}

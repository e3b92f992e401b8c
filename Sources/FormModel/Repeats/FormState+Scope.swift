import Foundation

extension FormState {
    /// Names as an expression at `prefix` sees them.
    struct Scope: ExpressionScope {
        let state: FormState
        let prefix: String
        let current: ExpressionValue
        var choice: Choice?
        /// The entity a `choiceFilter` of an entity choice field is tested on (`choice.<property>`).
        var entity: EntityRow?

        var clock: ExpressionClock { state.clock }

        /// The number of the innermost instance `prefix` names among its group's live instances.
        var position: Int? {
            guard let slash = prefix.lastIndex(of: "/") else { return nil }
            let groupKey = prefix[..<slash]
            let instance = prefix[prefix.index(after: slash)...]
            let group = groupKey.lastIndex(of: "/").map { groupKey[groupKey.index(after: $0)...] } ?? groupKey
            let parent = groupKey.lastIndex(of: "/").map { String(groupKey[..<$0]) } ?? ""
            return state.instances.live(String(group), in: parent).firstIndex { $0.id == instance }.map { $0 + 1 }
        }

        func choiceLabel(of value: String, field: String) -> String? {
            state.logic.fields.byID[field]?.choices?.first { $0.value == value }?.label.text
        }

        func entity(_ list: String, id: String, property: String) -> ExpressionValue {
            state.entities?.entity(id, in: list)?.value(of: property) ?? .null
        }

        func value(of path: [String]) -> ExpressionValue {
            if let entity, path.count == 2, path[0] == "choice" {
                switch path[1] {
                case "value": return .string(entity.id)
                default: return entity.value(of: path[1])
                }
            }
            if let choice, path.count == 2, path[0] == "choice" {
                switch path[1] {
                case "value": return .string(choice.value)
                case "label": return .string(choice.label.text)
                default: return choice.properties?[path[1]].map(ExpressionValue.string) ?? .null
                }
            }
            let fields = state.logic.fields
            // Looked up, not copied: every read of every expression in every instance passes here.
            guard fields.byID.index(forKey: path[0]) != nil else {
                return path.count == 2 && path[0] == RecordMetadata.prefix ? state.metadata.value(path[1]) : .null
            }
            let chain = fields.repeatChain(path[0])
            // The instance of each enclosing repeat that this scope is in.
            let parent = Self.prefix(of: chain, in: prefix)
            guard let parent else { return .null }  // a field of a repeat this scope is not inside
            return read(path[...], at: parent)
        }

        /// The field `path[1]` of the instance numbered `number` of the repeat `path[0]` (inside the instance of
        /// each repeat around it that this scope is in), whether or not this scope is inside that repeat.
        func value(of path: [String], inInstance number: Int) -> ExpressionValue {
            guard path.count == 2, let group = state.logic.fields.byID[path[0]], group.kind == .repeat,
                  let field = state.logic.fields.byID[path[1]], state.logic.fields.container[field.id] == group.id,
                  let parent = Self.prefix(of: state.logic.fields.repeatChain(group.id), in: prefix),
                  state.isRelevant(AnswerKey.key(group.id, in: parent)) else { return .null }
            let live = state.instances.live(group.id, in: parent)
            guard live.indices.contains(number - 1) else { return .null }
            return read([field.id], at: live[number - 1].prefix)
        }

        /// Reads `path` starting with a field that lives at `parent`; `parentShown`: `parent` is an instance of
        /// a repeat found relevant already, so a field's own condition is all that is left to check.
        func read(_ path: ArraySlice<String>, at parent: String, parentShown: Bool = false) -> ExpressionValue {
            // The definition is read where it is stored, not copied (30,000 reads to open 5,000 instances).
            let fields = state.logic.fields.byID
            guard let name = path.first, let index = fields.index(forKey: name) else { return .null }
            let key = AnswerKey.key(name, in: parent)
            guard fields.values[index].kind == .repeat else {
                guard path.count == 1 else { return .null }
                let isComputed = fields.values[index].isComputed
                return ExpressionValue(parentShown ? state.value(shownInstanceField: key, computed: isComputed) : state.value(key, computed: isComputed))
            }
            guard state.isRelevant(key) else { return path.count == 1 ? .list([]) : .list([]) }
            // Inside this repeat already: the same instance.
            if prefix.hasPrefix(key + "/"), let instance = Self.instancePrefix(of: name, in: prefix, after: key) {
                return path.count == 1 ? .number(1) : read(path.dropFirst(), at: instance)
            }
            let live = state.instances.live(name, in: parent)
            if path.count == 1 { return .list(live.map { _ in .bool(true) }) }
            var items: [ExpressionValue] = []
            for instance in live {
                switch read(path.dropFirst(), at: instance.prefix, parentShown: true) {
                case .list(let nested): items += nested
                case let value: items.append(value)
                }
            }
            return .list(items)
        }

        /// The prefix of the instance of the innermost of `chain` that `prefix` lies in ("" for an empty chain).
        /// Read in place, without splitting `prefix`: every expression of every instance asks this.
        static func prefix(of chain: [String], in prefix: String) -> String? {
            guard !chain.isEmpty else { return "" }
            let bytes = prefix.utf8
            let slash = UInt8(ascii: "/")
            var index = bytes.startIndex
            for (number, group) in chain.enumerated() {
                if number > 0 {
                    guard index < bytes.endIndex, bytes[index] == slash else { return nil }
                    index = bytes.index(after: index)
                }
                // `group/`, then the instance id up to the next `/` or the end.
                guard bytes[index...].starts(with: group.utf8) else { return nil }
                index = bytes.index(index, offsetBy: group.utf8.count)
                guard index < bytes.endIndex, bytes[index] == slash else { return nil }
                index = bytes[bytes.index(after: index)...].firstIndex(of: slash) ?? bytes.endIndex
            }
            return index == bytes.endIndex ? prefix : String(prefix[..<index])
        }

        static func instancePrefix(of group: String, in prefix: String, after groupKey: String) -> String? {
            let rest = prefix.dropFirst(groupKey.count + 1)
            guard let id = rest.split(separator: "/").first else { return nil }
            return groupKey + "/" + id
        }
    }
}

/// The relevance conditions of one form, parsed once and ordered so that each field's
/// condition is evaluated after the fields it reads.
///
/// A field that is not relevant counts as unanswered in other conditions, so hiding a field
/// also hides what depends on it.
public struct Relevance: Sendable {
    /// Parsed conditions by field id; fields without one are always relevant.
    public let conditions: [String: RelevanceExpression]
    private let order: [String]

    /// Builds the relevance of a form whose conditions already passed `FormChecker`
    /// (they parse, name known fields and have no cycle); a condition that does not parse is treated as always relevant.
    public init(form: FormDefinition) {
        var conditions: [String: RelevanceExpression] = [:]
        for field in form.allFields {
            if let source = field.relevant, let expression = try? RelevanceExpression.parse(source) {
                conditions[field.id] = expression
            }
        }
        self.conditions = conditions
        self.order = (try? RelevanceGraph(conditions: conditions, fieldOrder: form.allFields.map(\.id)).topologicalOrder()) ?? form.allFields.map(\.id)
    }

    /// The ids of the fields shown for these answers.
    public func relevantFields(for answers: [String: AnswerValue]) -> Set<String> {
        var relevant = Set<String>()
        for id in order {
            guard let condition = conditions[id] else {
                relevant.insert(id)
                continue
            }
            let shown = condition.evaluate { name in
                relevant.contains(name) ? RelevanceValue(answers[name]) : .null
            }.isTruthy
            if shown { relevant.insert(id) }
        }
        return relevant
    }
}

/// The graph "field → fields its condition reads", for ordering and for finding cycles.
public struct RelevanceGraph: Sendable {
    let edges: [String: [String]]
    let fieldOrder: [String]

    public init(conditions: [String: RelevanceExpression], fieldOrder: [String]) {
        self.edges = conditions.mapValues(\.referencedFields)
        self.fieldOrder = fieldOrder
    }

    /// A cycle of conditions (`a → b → a`), if there is one.
    public func firstCycle() -> [String]? {
        var state: [String: Int] = [:]  // 1 = on the current path, 2 = done
        var path: [String] = []
        func visit(_ node: String) -> [String]? {
            state[node] = 1
            path.append(node)
            for next in edges[node] ?? [] {
                if state[next] == 1, let start = path.firstIndex(of: next) {
                    return Array(path[start...]) + [next]
                }
                if state[next] == nil, let cycle = visit(next) { return cycle }
            }
            path.removeLast()
            state[node] = 2
            return nil
        }
        for node in fieldOrder where state[node] == nil {
            if let cycle = visit(node) { return cycle }
        }
        return nil
    }

    struct CycleError: Error {}

    /// Fields ordered so each comes after the fields its condition reads.
    func topologicalOrder() throws -> [String] {
        if firstCycle() != nil { throw CycleError() }
        var done = Set<String>()
        var order: [String] = []
        func visit(_ node: String) {
            guard !done.contains(node) else { return }
            done.insert(node)
            for next in edges[node] ?? [] { visit(next) }
            order.append(node)
        }
        fieldOrder.forEach(visit)
        return order.filter(fieldOrder.contains)
    }
}

/// The relevance conditions of one form, parsed once and ordered so that each field's
/// condition is evaluated after the fields it reads.
///
/// A field that is not relevant counts as unanswered in other conditions, so hiding a field
/// also hides what depends on it.
public struct Relevance: Sendable {
    /// Parsed conditions by field id; fields without one are always relevant.
    public let conditions: [String: RelevanceExpression]
    private let order: [String]
    /// Each field's place in `order`.
    private let position: [String: Int]

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
        self.position = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether the field `id` is shown for these answers, evaluating only the conditions it depends on
    /// (so checking one field of a wide form costs what its own conditions cost, not the whole form).
    public func isRelevant(_ id: String, for answers: [String: AnswerValue]) -> Bool {
        guard conditions[id] != nil else { return true }
        var needed: Set<String> = [id]
        var stack = [id]
        while let next = stack.popLast() {
            for name in conditions[next]?.referencedFields ?? [] where position[name] != nil && needed.insert(name).inserted {
                stack.append(name)
            }
        }
        var relevant = Set<String>()
        for name in needed.sorted(by: { (position[$0] ?? .max) < (position[$1] ?? .max) }) {
            guard let condition = conditions[name] else {
                relevant.insert(name)
                continue
            }
            let shown = condition.evaluate { field in
                relevant.contains(field) ? RelevanceValue(answers[field]) : .null
            }.isTruthy
            if shown { relevant.insert(name) }
        }
        return relevant.contains(id)
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
    ///
    /// Walks the graph with an explicit stack, so a chain of any length (`f1` reads `f2`, which reads `f3`, …)
    /// needs no more call stack than a short one.
    public func firstCycle() -> [String]? {
        var state: [String: Int] = [:]  // 1 = on the current path, 2 = done
        for root in fieldOrder where state[root] == nil {
            // Each frame: a node on the current path and the index of its next edge to follow.
            var path: [(node: String, next: Int)] = [(root, 0)]
            state[root] = 1
            while let top = path.last {
                let targets = edges[top.node] ?? []
                guard top.next < targets.count else {
                    state[top.node] = 2
                    path.removeLast()
                    continue
                }
                path[path.count - 1].next += 1
                let next = targets[top.next]
                if state[next] == 1, let start = path.firstIndex(where: { $0.node == next }) {
                    return path[start...].map(\.node) + [next]
                }
                if state[next] == nil {
                    state[next] = 1
                    path.append((next, 0))
                }
            }
        }
        return nil
    }

    struct CycleError: Error {}

    /// Fields ordered so each comes after the fields its condition reads (iteratively, like `firstCycle`).
    func topologicalOrder() throws -> [String] {
        if firstCycle() != nil { throw CycleError() }
        var done = Set<String>()
        var order: [String] = []
        for root in fieldOrder where !done.contains(root) {
            done.insert(root)
            var path: [(node: String, next: Int)] = [(root, 0)]
            while let top = path.last {
                let targets = edges[top.node] ?? []
                guard top.next < targets.count else {
                    order.append(top.node)
                    path.removeLast()
                    continue
                }
                path[path.count - 1].next += 1
                let next = targets[top.next]
                if done.insert(next).inserted { path.append((next, 0)) }
            }
        }
        let known = Set(fieldOrder)
        return order.filter(known.contains)
    }
}

/// The graph "field → fields its relevance or calculation reads", for ordering and for finding cycles.
struct RelevanceGraph: Sendable {
    let edges: [String: [String]]
    let fieldOrder: [String]

    /// The graph of the fields each condition (by field id) reads.
    init(conditions: [String: FormExpression], fieldOrder: [String]) {
        self.edges = conditions.mapValues(\.referencedFields)
        self.fieldOrder = fieldOrder
    }

    /// The graph of `edges` (field → the fields it reads).
    init(edges: [String: [String]], fieldOrder: [String]) {
        self.edges = edges
        self.fieldOrder = fieldOrder
    }

    /// A cycle of conditions (`a → b → a`), if there is one.
    ///
    /// Walks the graph with an explicit stack, so a chain of any length (`f1` reads `f2`, which reads `f3`, …)
    /// needs no more call stack than a short one.
    func firstCycle() -> [String]? {
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

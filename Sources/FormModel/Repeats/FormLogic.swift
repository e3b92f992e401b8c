/// A form's expressions, parsed once, with the order to evaluate them and who depends on whom.
///
/// A field's `relevant` and `calculation` give it a value others read; a field inside a repeat also depends on
/// the repeat's own relevance. Fields are evaluated in an order where each comes after what it reads (form
/// order where a broken form has a cycle), so one pass settles every value; after an edit only the fields that
/// depend on the edited one are evaluated again (see `FormState`).
public struct FormLogic: Sendable {
    /// The form the expressions come from.
    public let form: FormDefinition
    /// Every field of the form at any depth, indexed by id.
    public let fields: FormFields
    /// Parsed expressions by field id; expressions that do not parse are left out (the loader reports them).
    public let relevant: [String: FormExpression]
    /// Parsed `calculation`s by field id.
    public let calculation: [String: FormExpression]
    /// Parsed `constraint`s by field id.
    public let constraint: [String: FormExpression]
    /// Parsed `choiceFilter`s by field id.
    public let choiceFilter: [String: FormExpression]
    /// Parsed default expressions (`"default": {"expression": "today()"}`) by field id.
    public let defaultExpression: [String: FormExpression]
    /// Parsed required conditions (`"required": {"expression": "age >= 18"}`) by field id.
    public let requiredExpression: [String: FormExpression]
    /// The fields whose calculation calls `once()` or `uuid()`: the first value computed on the device is stored
    /// as the field's answer and read from then on.
    public let kept: Set<String>
    /// Every field id, each after the fields its relevance and calculation read.
    public let order: [String]
    /// Each field's place in `order`.
    let position: [String: Int]
    /// Who reads each field: (reader, whether it reads the value of the same instance only).
    let dependents: [String: [Dependency]]
    /// What each field's relevance and calculation read (field ids, the repeats they pass through included).
    let reads: [String: [String]]
    /// For a field inside a repeat whose relevance and calculation depend on nothing of its instance but the
    /// answers of these fields of the same instance (its own when they read `.`), top-level fields and
    /// constants: the fields. In every instance where none of them holds a value, they evaluate to the same
    /// result, so `FormState` evaluates them once for all such instances (a record of 5,000 defects whose
    /// severity is not chosen yet evaluates `urgent_note`'s relevance once, not 5,000 times). Absent for any
    /// other field: one that reads `position()`, another instance, an enclosing instance or a repeat, or is
    /// kept (`once()`, `uuid()`). Settable only so tests can compare with a state evaluated in every instance.
    var instanceInputs: [String: [String]]

    struct Dependency: Sendable, Hashable {
        var reader: String
        var sameInstance: Bool
    }

    /// Parses every expression of `form` and orders its fields; an expression that does not parse is left out.
    public init(form: FormDefinition) {
        let fields = FormFields(form: form)
        func parsed(_ property: KeyPath<FieldDefinition, String?>) -> [String: FormExpression] {
            var result: [String: FormExpression] = [:]
            for id in fields.order {
                if let source = fields.byID[id]?[keyPath: property], let expression = try? FormExpression.parse(source) {
                    result[id] = expression
                }
            }
            return result
        }
        self.form = form
        self.fields = fields
        self.relevant = parsed(\.relevant)
        self.calculation = parsed(\.calculation)
        self.constraint = parsed(\.constraint)
        self.choiceFilter = parsed(\.choiceFilter)
        self.defaultExpression = parsed(\.defaultExpression)
        self.requiredExpression = parsed(\.requiredExpression)
        self.kept = Set(calculation.filter { $0.value.calls(.once) || $0.value.calls(.uuid) }.keys)

        var reads: [String: [String]] = [:]
        var dependents: [String: [Dependency]] = [:]
        for id in fields.order {
            var read: [String] = []
            func add(_ source: String, sameInstance: Bool) {
                guard fields.byID[source] != nil, source != id || !sameInstance else { return }
                if !read.contains(source) { read.append(source) }
                dependents[source, default: []].append(Dependency(reader: id, sameInstance: sameInstance))
            }
            if let group = fields.container[id] { add(group, sameInstance: false) }
            for expression in [relevant[id], calculation[id]].compactMap({ $0 }) {
                for path in expression.referencedNames {
                    for (source, same) in Self.sources(of: path, from: id, in: fields) { add(source, sameInstance: same) }
                }
                // indexed-repeat(group.field, n) reads another instance than the reader's own, even inside the repeat.
                expression.visit { node in
                    guard case .call(.indexedRepeat, let arguments) = node, case .name(let path) = arguments.first else { return }
                    for name in path where fields.byID[name] != nil { add(name, sameInstance: false) }
                }
            }
            reads[id] = read
        }
        self.reads = reads
        self.dependents = dependents
        var instanceInputs: [String: [String]] = [:]
        for id in fields.order where !kept.contains(id) {
            let expressions = [relevant[id], calculation[id]].compactMap { $0 }
            let chain = fields.repeatChain(id)
            guard !expressions.isEmpty, !chain.isEmpty else { continue }
            instanceInputs[id] = Self.instanceInputs(of: expressions, reader: id, chain: chain, in: fields)
        }
        self.instanceInputs = instanceInputs
        let graph = RelevanceGraph(edges: reads, fieldOrder: fields.order)
        self.order = (try? graph.topologicalOrder()) ?? fields.order
        self.position = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The fields a name path read from `reader` depends on, and whether each read is of the reader's own instance.
    static func sources(of path: [String], from reader: String, in fields: FormFields) -> [(String, Bool)] {
        let readerChain = fields.repeatChain(reader)
        var result: [(String, Bool)] = []
        // record.start and the like read the record's metadata, which does not change while it is filled.
        if path.count == 2, path[0] == RecordMetadata.prefix, fields.byID[path[0]] == nil { return result }
        for (index, name) in path.enumerated() where fields.byID[name] != nil {
            let chain = fields.repeatChain(name)
            // A plain read of a field in the reader's own instance (or an enclosing one, or the top level) is
            // scalar; anything read across instances (a path through a repeat) depends on every instance.
            let scalar = index == path.count - 1 && path.dropLast().allSatisfy { readerChain.contains($0) } && readerChain.starts(with: chain)
            let sameInstance = scalar && !chain.isEmpty && chain == readerChain
            result.append((name, sameInstance))
        }
        return result
    }

    /// The same-instance fields `expressions` of `reader` (inside the repeats `chain`) read, when that and
    /// top-level fields and constants are all they depend on; nil when they depend on anything else of the
    /// instance they are evaluated in (see `instanceInputs`).
    static func instanceInputs(of expressions: [FormExpression], reader: String, chain: [String], in fields: FormFields) -> [String]? {
        var inputs: [String] = []
        var local = true
        for expression in expressions {
            expression.visit { node in
                switch node {
                case .current:
                    if !inputs.contains(reader) { inputs.append(reader) }
                case .call(let function, _) where function == .position || function == .indexedRepeat || function == .uuid || function == .once:
                    local = false
                case .name(let path):
                    // `record.start`, a name that is no field: the same in every instance.
                    guard let field = fields.byID[path[0]] else { return }
                    let scalar = path.count == 1 && field.kind != .repeat
                    let fieldChain = fields.repeatChain(field.id)
                    if scalar, fieldChain == chain {
                        if !inputs.contains(field.id) { inputs.append(field.id) }
                    } else if !(scalar && fieldChain.isEmpty) {
                        local = false
                    }
                default:
                    break
                }
            }
        }
        return local ? inputs : nil
    }

    /// The fields directly inside repeat `group`, in form order.
    public func children(of group: String) -> [String] {
        fields.byID[group]?.fields?.map(\.id) ?? []
    }
}

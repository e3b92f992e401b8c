import Foundation
import Testing
@testable import FormModel

/// Hostile form definitions and conditions: every limit answers with an error naming it, never a crash.
struct InputLimitTests {
    /// A form whose field `b` has the condition `relevant`.
    static func form(relevant: String) -> String {
        let escaped = String(decoding: try! JSONEncoder().encode(relevant), as: UTF8.self)
        return Fixtures.formJSON(fields: #"[{ "id": "a", "kind": "integer", "label": "A" }, { "id": "b", "kind": "text", "label": "B", "relevant": \#(escaped) }]"#)
    }

    @Test(arguments: [
        String(repeating: "(", count: 100_000) + "a" + String(repeating: ")", count: 100_000),
        String(repeating: "not ", count: 50_000) + "a",
        String(repeating: "!", count: 50_000) + "a",
        String(repeating: "(not ", count: 20_000) + "a" + String(repeating: ")", count: 20_000),
    ])
    func deeplyNestedConditionsAreRefusedWithAFinding(source: String) {
        let result = Fixtures.load(Self.form(relevant: source))
        #expect(result.loaded == nil)
        let finding = result.findings.first { $0.rule == "relevance-syntax" }
        #expect(finding?.path.description == "$.pages[0].fields[1].relevant")
        #expect(finding?.location != nil)
        #expect(finding.map { $0.message.contains("levels deep") || $0.message.contains("characters long") } == true, "\(result.findings)")
    }

    @Test func nestingUpToTheLimitParsesAndEvaluates() throws {
        let depth = FormExpression.maximumNesting
        let nested = String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth)
        #expect(try FormExpression.parse(nested).isSatisfied(by: ["a": .integer(1)]))
        let nots = String(repeating: "not ", count: depth) + "a"
        #expect(try FormExpression.parse(nots).isSatisfied(by: ["a": .boolean(true)]) == (depth % 2 == 0))
        #expect(throws: ExpressionSyntaxError.self) { try FormExpression.parse("(" + nested + ")") }
    }

    @Test func longAndOrChainsParseIntoShallowTreesWithTheSameMeaning() throws {
        // 400 terms: within the length limit, far beyond the nesting limit if chains nested.
        let terms = (0..<400).map { "a > \($0 % 7)" }
        let all = try FormExpression.parse(terms.joined(separator: " and "))
        #expect(all.isSatisfied(by: ["a": .integer(7)]))
        #expect(!all.isSatisfied(by: ["a": .integer(6)]))
        let any = try FormExpression.parse(terms.joined(separator: " or "))
        #expect(any.isSatisfied(by: ["a": .integer(1)]))
        #expect(!any.isSatisfied(by: ["a": .integer(0)]))
        #expect(Self.depth(of: all) <= 12)
        // Mixed: and binds tighter than or, as before.
        #expect(try FormExpression.parse("a == 1 or a == 2 and a == 3 or a == 4").isSatisfied(by: ["a": .integer(4)]))
        #expect(!(try FormExpression.parse("a == 1 or a == 2 and a == 3 or a == 4").isSatisfied(by: ["a": .integer(2)])))
    }

    @Test func aConditionLongerThanTheLimitIsRefused() {
        let long = (0..<2_000).map { _ in "a" }.joined(separator: " or ")
        #expect(long.count > FormExpression.maximumLength)
        #expect(throws: ExpressionSyntaxError.self) { try FormExpression.parse(long) }
        let result = Fixtures.load(Self.form(relevant: long))
        #expect(result.findings.contains { $0.rule == "relevance-syntax" && $0.message.contains("at most \(FormExpression.maximumLength)") })
    }

    @Test func aLongChainOfConditionsAcrossFieldsNeedsNoDeepStack() throws {
        // f0 reads f1, which reads f2, … : 20,000 fields, ordered and checked for cycles without recursion.
        let count = 20_000
        let fields = (0..<count).map { index in
            index + 1 < count
                ? #"{ "id": "f\#(index)", "kind": "boolean", "label": "F\#(index)", "relevant": "f\#(index + 1)" }"#
                : #"{ "id": "f\#(index)", "kind": "boolean", "label": "F\#(index)" }"#
        }
        let result = Fixtures.load(Fixtures.formJSON(fields: "[" + fields.joined(separator: ",") + "]"))
        let loaded = try #require(result.loaded, "\(result.findings.prefix(3))")
        let relevance = Relevance(form: loaded.form)
        #expect(relevance.relevantFields(for: ["f\(count - 1)": .boolean(true), "f\(count - 2)": .boolean(true)]).contains("f\(count - 3)"))
        // And a cycle through all of them is found.
        let cyclic = fields.dropLast() + [#"{ "id": "f\#(count - 1)", "kind": "boolean", "label": "Last", "relevant": "f0" }"#]
        let cycle = Fixtures.load(Fixtures.formJSON(fields: "[" + cyclic.joined(separator: ",") + "]"))
        #expect(cycle.findings.contains { $0.rule == "relevance-cycle" })
    }

    @Test func deeplyNestedJSONIsASyntaxFindingAtItsPlace() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let result = Fixtures.load(deep)
        let finding = result.findings.first
        #expect(finding?.rule == "json-syntax")
        #expect(finding?.message.contains("deeper than \(JSONParser.defaultMaximumDepth) levels") == true)
        #expect(finding?.location == SourceLocation(line: 1, column: JSONParser.defaultMaximumDepth + 1))
        let objects = String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000)
        #expect(Fixtures.load(objects).findings.first?.rule == "json-syntax")
    }

    @Test func aDocumentLongerThanTheLimitIsRefusedBeforeParsing() {
        let parser = JSONParser(maximumLength: 1_000)
        #expect(throws: JSONSyntaxError.self) { try parser.parse(Data(repeating: 0x20, count: 1_001)) }
        #expect((try? parser.parse("[" + String(repeating: " ", count: 900) + "]")) != nil)
    }

    static func depth(of expression: FormExpression) -> Int {
        switch expression {
        case .name, .current, .literal, .list: return 1
        case .not(let inner), .negate(let inner): return 1 + depth(of: inner)
        case .and(let left, let right), .or(let left, let right), .compare(let left, _, let right), .membership(let left, let right):
            return 1 + max(depth(of: left), depth(of: right))
        case .arithmetic(let first, let steps): return 1 + (([first] + steps.map(\.operand)).map { depth(of: $0) }.max() ?? 0)
        case .call(_, let arguments): return 1 + (arguments.map { depth(of: $0) }.max() ?? 0)
        case .entity(_, let id, _): return 1 + depth(of: id)
        }
    }
}

struct RelevanceOfOneFieldTests {
    @Test func isRelevantAgreesWithTheWholeFormForRandomAnswers() throws {
        var generator = SplitMix64(seed: UInt64.random(in: 0...UInt64.max))
        print("RelevanceOfOneFieldTests seed: \(generator.seed)")
        let fields = [
            FieldDefinition(id: "a", kind: .integer, label: "A"),
            FieldDefinition(id: "b", kind: .boolean, label: "B", relevant: "a > 2"),
            FieldDefinition(id: "c", kind: .text, label: "C", relevant: "b and a < 8"),
            FieldDefinition(id: "d", kind: .text, label: "D", relevant: "not c or e == 'x'"),
            FieldDefinition(id: "e", kind: .text, label: "E"),
            FieldDefinition(id: "f", kind: .text, label: "F", relevant: "g"),  // a cycle: form order decides
            FieldDefinition(id: "g", kind: .boolean, label: "G", relevant: "f"),
        ]
        let relevance = Relevance(form: FormDefinition(id: "r", title: "R", completionLabel: "Add", pages: [FormPage(id: "p", fields: fields)]))
        for _ in 0..<500 {
            var answers: [String: AnswerValue] = [:]
            if generator.next() % 3 != 0 { answers["a"] = .integer(Int(generator.next() % 10)) }
            if generator.next() % 3 != 0 { answers["b"] = .boolean(generator.next() % 2 == 0) }
            if generator.next() % 3 != 0 { answers["c"] = .text(generator.next() % 2 == 0 ? "" : "y") }
            if generator.next() % 3 != 0 { answers["e"] = .text(generator.next() % 2 == 0 ? "x" : "z") }
            if generator.next() % 3 != 0 { answers["f"] = .text("t") }
            if generator.next() % 3 != 0 { answers["g"] = .boolean(generator.next() % 2 == 0) }
            let all = relevance.relevantFields(for: answers)
            for field in fields {
                #expect(relevance.isRelevant(field.id, for: answers) == all.contains(field.id), "\(field.id) with \(answers)")
            }
        }
    }
}

/// A small deterministic generator whose seed is printed, so a failure can be replayed.
struct SplitMix64 {
    let seed: UInt64
    var state: UInt64
    init(seed: UInt64) { self.seed = seed; self.state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

import Foundation
import Testing
@testable import FormModel

/// A repeat's per-instance relevance and calculations are evaluated once for all the instances in which the
/// fields they read hold no value (`FormLogic.instanceInputs`). The state so built, and then kept up to date edit
/// by edit, equals one evaluated in every instance, over randomized forms and answers.
struct BlankInstanceEvaluationTests {
    /// Relevance conditions a field inside `items` may get; `d1` only for fields after it.
    static let relevances = [
        "a > 2", "b == 'x'", "a > 2 or b == 'x'", "top == 'y'", "not(a > 2)", "string-length(b) == 0", "coalesce(a, 0) == 0",
        "position() > 1", "count(items) > 2", "c == 'p' and top != ''", "today() == '2026-11-28'", "indexed-repeat(items.a, 1) == a",
    ]
    /// Calculations a `calculate` field inside `items` may get; `d1`, `d2` only for the fields after them.
    static let calculations = [
        "a * 2", "concat(b, '-', a)", "coalesce(a, 7)", "if(b == 'x', 1, 2)", "top", "position()", "if(c == 'q', 'q', 'other')",
        "indexed-repeat(items.a, 2)", "count(items)", "42",
    ]

    /// A form whose repeat `items` holds answered fields `a`, `b`, `c`, computed `d1`…`d3` and answered `e1`, `e2`
    /// with conditions and calculations drawn at random, and top-level totals over them.
    static func randomForm(_ generator: inout SplitMix64) throws -> FormDefinition {
        func pick(_ list: [String]) -> String { list[Int(generator.next() % UInt64(list.count))] }
        func relevance(after derived: Int) -> String {
            let extra = ["d1 > 3", "coalesce(d1, 0) == 0"].prefix(derived >= 1 ? 2 : 0)
            guard generator.next() % 3 != 0 else { return "" }
            return #", "relevant": "\#(pick(relevances + extra))""#
        }
        var fields = [
            #"{ "id": "a", "kind": "integer", "label": "A" }"#,
            #"{ "id": "b", "kind": "text", "label": "B" }"#,
            #"{ "id": "c", "kind": "singleChoice", "label": "C", "choices": [{ "value": "p", "label": "P" }, { "value": "q", "label": "Q" }] }"#,
        ]
        for number in 1...3 {
            let extra = ["d1", "coalesce(d1, 'none')", "concat(d2, b)"].prefix(number == 1 ? 0 : number == 2 ? 2 : 3)
            fields.append(#"{ "id": "d\#(number)", "kind": "calculate", "label": "D\#(number)", "calculation": "\#(pick(calculations + extra))"\#(relevance(after: number - 1)) }"#)
        }
        fields.append(#"{ "id": "e1", "kind": "text", "label": "E1"\#(relevance(after: 3)) }"#)
        fields.append(#"{ "id": "e2", "kind": "text", "label": "E2"\#(relevance(after: 3)) }"#)
        let json = Fixtures.formJSON(fields: """
            [{ "id": "top", "kind": "text", "label": "Top" },
             { "id": "items", "kind": "repeat", "label": "Items", "fields": [\(fields.joined(separator: ",\n"))] },
             { "id": "total", "kind": "calculate", "label": "Total", "calculation": "sum(items.a)" },
             { "id": "shown", "kind": "calculate", "label": "Shown", "calculation": "count(items.e1)" },
             { "id": "firsts", "kind": "calculate", "label": "Firsts", "calculation": "count(items.d1)" }]
            """)
        let result = Fixtures.load(json)
        return try #require(result.loaded?.form, "\(result.findings.map(\.message))\n\(json)")
    }

    /// A random value for the answered field `field`, or for a computed one (whose stored answer is not read).
    static func value(of field: String, _ generator: inout SplitMix64) -> AnswerValue {
        switch field {
        case "a": return .integer(Int(generator.next() % 6))
        case "c": return .choice(generator.next() % 2 == 0 ? "p" : "q")
        default: return .text(["x", "y", "", "hide"][Int(generator.next() % 4)])
        }
    }

    @Test func evaluatingBlankInstancesOnceGivesWhatEveryInstanceGives() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("BlankInstanceEvaluationTests seed: \(seed)")
        var generator = SplitMix64(seed: seed)
        let clock = ExpressionClock(today: "2026-11-28", now: "2026-11-28T10:00")
        let answerable = ["a", "b", "c", "d1", "e1", "e2"]
        var memoized = 0
        for round in 0..<150 {
            let logic = FormLogic(form: try Self.randomForm(&generator))
            memoized += logic.instanceInputs.count
            var eagerLogic = logic
            eagerLogic.instanceInputs = [:]
            var answers: [String: AnswerValue] = [:]
            if generator.next() % 2 == 0 { answers["top"] = .text(generator.next() % 2 == 0 ? "y" : "n") }
            let count = Int(generator.next() % 30)
            for instance in 0..<count {
                let prefix = "items/i\(instance)"
                answers[prefix + "/" + AnswerKey.position] = .integer(1 + Int(generator.next() % 40))
                if generator.next() % 8 == 0 { answers[prefix + "/" + AnswerKey.removed] = .boolean(true) }
                for field in answerable where generator.next() % 3 == 0 { answers[prefix + "/" + field] = Self.value(of: field, &generator) }
            }
            var state = FormState(logic: logic, answers: answers, clock: clock)
            var eager = FormState(logic: eagerLogic, answers: answers, clock: clock)
            let fields = logic.form.allFields.first { $0.id == "items" }?.fields?.map { "\($0.id): \($0.relevant ?? "-") / \($0.calculation ?? "-")" } ?? []
            #expect(state.hidden == eager.hidden, "seed \(seed) round \(round) \(fields)")
            #expect(state.computed == eager.computed, "seed \(seed) round \(round) \(fields)")
            for step in 0..<15 {
                let instance = "items/i\(Int(generator.next() % UInt64(count + 2)))"
                var edits: [String: AnswerValue?] = [:]
                switch generator.next() % 5 {
                case 0: edits[instance + "/" + AnswerKey.position] = .integer(1 + Int(generator.next() % 40))
                case 1: edits[instance + "/" + AnswerKey.removed] = .boolean(generator.next() % 2 == 0)
                case 2: edits["top"] = generator.next() % 3 == 0 ? nil : .text(generator.next() % 2 == 0 ? "y" : "n")
                default:
                    let field = answerable[Int(generator.next() % UInt64(answerable.count))]
                    edits[instance + "/" + field] = generator.next() % 3 == 0 ? nil : Self.value(of: field, &generator)
                }
                let changed = state.apply(edits)
                let changedEagerly = eager.apply(edits)
                #expect(changed == changedEagerly, "seed \(seed) round \(round) step \(step) \(fields)")
                #expect(state.hidden == eager.hidden, "seed \(seed) round \(round) step \(step) \(fields)")
                #expect(state.computed == eager.computed, "seed \(seed) round \(round) step \(step) \(fields)")
            }
        }
        // Not vacuous: the forms drawn have fields evaluated once for their blank instances.
        #expect(memoized > 150, "seed \(seed)")
    }

    /// Which fields are evaluated once for their blank instances: those reading only their own instance's
    /// answers, top-level fields and constants; not `position()`, another instance or a repeat.
    @Test func onlyInstanceLocalExpressionsAreEvaluatedOnceForBlankInstances() throws {
        let logic = FormLogic(form: try RepeatTests.form())
        #expect(logic.instanceInputs["urgent_note"] == ["severity"])
        #expect(logic.instanceInputs["defect_count"] == nil)  // top level
        let json = Fixtures.formJSON(fields: """
            [{ "id": "top", "kind": "text", "label": "Top" },
             { "id": "items", "kind": "repeat", "label": "Items", "fields": [
                { "id": "a", "kind": "integer", "label": "A" },
                { "id": "b", "kind": "text", "label": "B" },
                { "id": "own", "kind": "text", "label": "Own", "relevant": "b != 'x' and a > 1 and top != ''" },
                { "id": "where", "kind": "calculate", "label": "Where", "calculation": "position()" },
                { "id": "other", "kind": "calculate", "label": "Other", "calculation": "indexed-repeat(items.a, 1)" },
                { "id": "all", "kind": "calculate", "label": "All", "calculation": "count(items)" },
                { "id": "once", "kind": "calculate", "label": "Once", "calculation": "once(a)" }]}]
            """)
        let form = try #require(Fixtures.load(json).loaded?.form, "\(Fixtures.load(json).findings.map(\.message))")
        let items = FormLogic(form: form)
        #expect(items.instanceInputs["own"] == ["b", "a"])
        #expect(items.instanceInputs["where"] == nil)
        #expect(items.instanceInputs["other"] == nil)
        #expect(items.instanceInputs["all"] == nil)
        #expect(items.instanceInputs["once"] == nil)
    }
}

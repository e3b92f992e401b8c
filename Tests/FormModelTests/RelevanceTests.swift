import Testing
@testable import FormModel

struct RelevanceTests {
    @Test(arguments: [
        ("priority == 'high'", ["priority": AnswerValue.choice("high")], true),
        ("priority == 'high'", ["priority": AnswerValue.choice("low")], false),
        ("priority == 'high'", [:], false),
        ("priority != 'high'", [:], true),
        ("count > 3", ["count": AnswerValue.integer(4)], true),
        ("count >= 3 and count <= 5", ["count": AnswerValue.integer(3)], true),
        ("count > 3", [:], false),
        ("count < 3", [:], false),
        ("not parts_needed", ["parts_needed": AnswerValue.boolean(false)], true),
        ("parts_needed", ["parts_needed": AnswerValue.boolean(true)], true),
        ("!parts_needed || count == 2", ["parts_needed": AnswerValue.boolean(true), "count": AnswerValue.integer(2)], true),
        ("rating in ['minor', 'fail']", ["rating": AnswerValue.choice("fail")], true),
        ("rating in ['minor', 'fail']", ["rating": AnswerValue.choice("pass")], false),
        ("'water' in hazards", ["hazards": AnswerValue.choices(["electrical", "water"])], true),
        ("'water' in hazards", ["hazards": AnswerValue.choices([])], false),
        ("hazards != null", ["hazards": AnswerValue.choices(["water"])], true),
        ("hazards == null", [:], true),
        ("(a == 1 or b == 2) and not c", ["a": AnswerValue.integer(1), "c": AnswerValue.boolean(false)], true),
        ("weight > 2.5", ["weight": AnswerValue.decimal(3)], true),
        ("due < '2026-12-01'", ["due": AnswerValue.date("2026-11-22")], true),
        ("site == \"Depot \\\"A\\\"\"", ["site": AnswerValue.text("Depot \"A\"")], true),
    ])
    func conditionsEvaluateOverAnswers(source: String, answers: [String: AnswerValue], expected: Bool) throws {
        let expression = try FormExpression.parse(source)
        #expect(expression.isSatisfied(by: answers) == expected)
    }

    @Test(arguments: [
        ("priority = 'high'", 10, "'=='"),
        ("priority == ", 13, "ends where"),
        ("(a == 1", 8, "')'"),
        ("a == 'x", 6, "not closed"),
        ("a == 1 b", 8, "after a complete condition"),
        ("a in [b]", 7, "A list holds only"),
        ("a == #", 6, "Unexpected character"),
        ("and a", 1, "keyword 'and'"),
    ])
    func malformedConditionsSayWhatAndWhere(source: String, column: Int, message: String) {
        #expect {
            _ = try FormExpression.parse(source)
        } throws: { error in
            guard let error = error as? ExpressionSyntaxError else { return false }
            return error.column == column && error.message.contains(message)
        }
    }

    @Test func referencedFieldsAreListedOnce() throws {
        #expect(try FormExpression.parse("a == 1 or (b and a != 2) or 'x' in c").referencedFields == ["a", "b", "c"])
    }

    @Test func aHiddenFieldHidesTheFieldsThatDependOnIt() throws {
        let form = FormDefinition(id: "f", title: "T", completionLabel: "Add", pages: [
            FormPage(id: "p", fields: [
                FieldDefinition(id: "kind", kind: .singleChoice, label: "Kind", choices: [Choice(value: "a", label: "A"), Choice(value: "b", label: "B")]),
                FieldDefinition(id: "detail", kind: .text, label: "Detail", relevant: "extra == 'yes'"),
                FieldDefinition(id: "extra", kind: .text, label: "Extra", relevant: "kind == 'a'"),
            ])
        ])
        let relevance = Relevance(form: form)
        // `extra` holds "yes" but is hidden (kind is b), so `detail` is hidden too although it comes first.
        #expect(relevance.relevantFields(for: ["kind": .choice("b"), "extra": .text("yes")]) == ["kind"])
        #expect(relevance.relevantFields(for: ["kind": .choice("a"), "extra": .text("yes")]) == ["kind", "extra", "detail"])
    }

    @Test func cyclesAreFound() throws {
        let graph = RelevanceGraph(conditions: [
            "a": try FormExpression.parse("b"), "b": try FormExpression.parse("a"),
        ], fieldOrder: ["a", "b"])
        #expect(graph.firstCycle() == ["a", "b", "a"])
        let acyclic = RelevanceGraph(conditions: ["a": try FormExpression.parse("b")], fieldOrder: ["a", "b"])
        #expect(acyclic.firstCycle() == nil)
    }
}

import Foundation
import Testing
@testable import FormModel

/// `${name}` in labels, hints, choice labels and messages: parsed, checked by the loader like an expression's
/// names, and shown with the current answers.
struct FormTextTests {
    @Test func referencesAreNamesAndEverythingElseIsText() {
        #expect(FormText("BMI for ${full_name}: ${bmi}").parts == [.text("BMI for "), .reference(["full_name"]), .text(": "), .reference(["bmi"])])
        #expect(FormText("Total ${defects.cost}").references == [["defects", "cost"]])
        // Not a name, or not closed: text as written.
        #expect(FormText("Costs ${1x} and ${a b} and ${} and ${open").parts == [.text("Costs ${1x} and ${a b} and ${} and ${open")])
        #expect(FormText("$5 {x} plain").parts == [.text("$5 {x} plain")])
        #expect(FormText("").parts.isEmpty)
    }

    static let form = """
    [{ "id": "full_name", "kind": "text", "label": "Name" },
     { "id": "weight", "kind": "decimal", "label": "Weight" },
     { "id": "height", "kind": "decimal", "label": "Height (m)" },
     { "id": "bmi", "kind": "calculate", "label": "BMI", "calculation": "round(weight / (height * height), 1)" },
     { "id": "fruit", "kind": "singleChoice", "label": "Fruit", "choices": [{ "value": "apple", "label": "Apple" }, { "value": "pear", "label": "Pear" }] },
     { "id": "told", "kind": "note", "label": "BMI for ${full_name}: ${bmi}; likes ${fruit}." },
     { "id": "defects", "kind": "repeat", "label": "Defect", "fields": [
        { "id": "where", "kind": "text", "label": "Where" },
        { "id": "cost", "kind": "decimal", "label": "Cost of the defect at ${where}", "hint": "${full_name} pays",
          "constraint": ". < 100", "constraintMessage": "At ${where}, ${full_name} pays less than 100." }] },
     { "id": "total", "kind": "calculate", "label": "Total", "calculation": "sum(defects.cost)" },
     { "id": "summary", "kind": "note", "label": "Costs: ${defects.cost} (total ${total})" }]
    """

    @Test func textsShowTheAnswersTheyReferTo() throws {
        let loaded = Fixtures.load(Fixtures.formJSON(fields: Self.form))
        let form = try #require(loaded.loaded?.form, "\(loaded.findings)")
        let logic = FormLogic(form: form)
        var answers: [String: AnswerValue] = ["full_name": .text("Ann"), "weight": .decimal(70), "height": .decimal(1.75), "fruit": .choice("pear")]
        answers["defects/a/@position"] = .integer(1)
        answers["defects/a/where"] = .text("roof")
        answers["defects/a/cost"] = .decimal(150)
        answers["defects/b/@position"] = .integer(2)
        answers["defects/b/where"] = .text("door")
        answers["defects/b/cost"] = .decimal(20)
        let state = FormState(logic: logic, answers: answers)
        #expect(state.text("BMI for ${full_name}: ${bmi}; likes ${fruit}.", at: "told") == "BMI for Ann: 22.9; likes Pear.")
        // Inside a repeat, a name is the same instance's; a repeat's field from outside is every instance's.
        #expect(state.text("Cost of the defect at ${where}", at: "defects/b/cost") == "Cost of the defect at door")
        #expect(state.text("Costs: ${defects.cost} (total ${total})", at: "summary") == "Costs: 150, 20 (total 170)")
        // An unanswered field reads as nothing; text without references is returned as it is.
        #expect(FormState(logic: logic, answers: [:]).text("Hello ${full_name}!", at: "told") == "Hello !")
        #expect(state.text("No ${references} here ${1}", at: "told") == "No  here ${1}")
        // The constraint message a person reads names the answers too.
        let issues = FormValidator(form: form).validate(state).issues
        #expect(issues.map(\.message) == ["At roof, Ann pays less than 100."], "\(issues)")
    }

    /// `choice-label(value, 'field')` (XLSForm's jr:choice-name): the label of the chosen choice, in a
    /// calculation and so in a label that shows it.
    @Test func choiceLabelReadsTheChoicesLabel() throws {
        let loaded = Fixtures.load(Fixtures.formJSON(fields: #"""
        [{ "id": "fruit", "kind": "singleChoice", "label": "Fruit", "choices": [{ "value": "apple", "label": "Apple" }, { "value": "pear", "label": "Pear" }] },
         { "id": "named", "kind": "calculate", "label": "Named", "calculation": "choice-label(fruit, 'fruit')" },
         { "id": "told", "kind": "note", "label": "You chose ${named}." }]
        """#))
        let form = try #require(loaded.loaded?.form, "\(loaded.findings)")
        let state = FormState(logic: FormLogic(form: form), answers: ["fruit": .choice("pear")])
        #expect(state.text("You chose ${named}.", at: "told") == "You chose Pear.")
        #expect(state.evaluate(try FormExpression.parse("choice-label('kiwi', 'fruit')"), at: "told") == .string("kiwi"))
        // The field named in the string is checked like a name.
        let unknown = Fixtures.load(Fixtures.formJSON(fields: #"[{ "id": "named", "kind": "calculate", "label": "N", "calculation": "choice-label('a', 'nothing')" }]"#))
        #expect(unknown.findings.contains { $0.rule == "calculation-unknown-field" && $0.path.description == "$.pages[0].fields[0].calculation" }, "\(unknown.findings)")
    }

    @Test(arguments: [
        (#"[{ "id": "a", "kind": "text", "label": "Hello ${nobody}" }]"#, "text-unknown-field", "$.pages[0].fields[0].label"),
        (#"[{ "id": "a", "kind": "text", "label": "A", "hint": "See ${b}" }]"#, "text-unknown-field", "$.pages[0].fields[0].hint"),
        (#"[{ "id": "a", "kind": "singleChoice", "label": "A", "choices": [{ "value": "x", "label": "X of ${zz}" }] }]"#, "text-unknown-field", "$.pages[0].fields[0].choices[0].label"),
        (#"[{ "id": "g", "kind": "repeat", "label": "G", "fields": [{ "id": "x", "kind": "text", "label": "X" }] }, { "id": "n", "kind": "note", "label": "Last ${x}" }]"#,
         "repeat-scope", "$.pages[0].fields[1].label"),
        (#"[{ "id": "n", "kind": "note", "label": "N" }, { "id": "a", "kind": "integer", "label": "A", "constraint": ". > 1", "constraintMessage": "Read ${n}" }]"#,
         "text-note-field", "$.pages[0].fields[1].constraintMessage"),
    ])
    func referencesAreCheckedLikeAnExpressionsNames(fields: String, rule: String, path: String) throws {
        let findings = Fixtures.load(Fixtures.formJSON(fields: fields)).findings
        let finding = try #require(findings.first { $0.rule == rule }, "\(findings)")
        #expect(finding.path.description == path)
        #expect(finding.severity == .error && finding.location != nil && !finding.fix.isEmpty)
    }

    /// `record.start`, `record.today`, `record.device`, … read the record's metadata (XLSForm's `${start}`,
    /// `${deviceid}`), in texts and expressions; unknown to the state, they read as nothing.
    @Test func recordMetadataIsReadAsRecordDotName() throws {
        let loaded = Fixtures.load(Fixtures.formJSON(fields: #"""
        [{ "id": "seen", "kind": "date", "label": "Seen", "constraint": ". <= record.today" },
         { "id": "late", "kind": "calculate", "label": "Late", "calculation": "if(record.start > '2026-11-26T00:00', 'yes', 'no')" },
         { "id": "told", "kind": "note", "label": "Started ${record.start} (${record.today}) on ${record.device} by ${record.user}; ended ${record.end}." }]
        """#))
        let form = try #require(loaded.loaded?.form, "\(loaded.findings)")
        let logic = FormLogic(form: form)
        let metadata = RecordMetadata(start: "2026-11-26T09:30", device: "tablet-7", user: "ann")
        let state = FormState(logic: logic, answers: ["seen": .date("2026-11-27")], metadata: metadata)
        #expect(state.text("Started ${record.start} (${record.today}) on ${record.device} by ${record.user}; ended ${record.end}.", at: "told") == "Started 2026-11-26 09:30 (2026-11-26) on tablet-7 by ann; ended .")
        #expect(state.value("late") == .text("yes"))
        #expect(FormValidator(form: form).validate(state).issues.map(\.fieldID) == ["seen"])
        // Nothing known: every name reads null.
        let unknown = FormState(logic: logic, answers: [:])
        #expect(unknown.text("On ${record.device}.", at: "told") == "On .")
        #expect(unknown.value("late") == .text("no"))
        // The day and time are local, at the moment the record was created.
        let started = RecordMetadata(startedAt: Date(timeIntervalSince1970: 86_400 * 3 + 3_600), device: nil, timeZone: try #require(TimeZone(identifier: "UTC")))
        #expect(started.value("start") == .dateTime("1970-01-04T01:00") && started.value("today") == .date("1970-01-04"))
    }

    @Test func onlyWhatARecordKeepsIsReadAfterRecordDot() throws {
        let findings = Fixtures.load(Fixtures.formJSON(fields: #"[{ "id": "n", "kind": "note", "label": "SIM ${record.simserial}" }]"#)).findings
        let finding = try #require(findings.first { $0.rule == "text-unknown-field" }, "\(findings)")
        #expect(finding.message.contains("record.simserial") && finding.fix.contains("record.start"))
        // A field of the form's own named record is read instead.
        let own = Fixtures.load(Fixtures.formJSON(fields: #"""
        [{ "id": "record", "kind": "repeat", "label": "R", "fields": [{ "id": "start", "kind": "text", "label": "S" }] },
         { "id": "n", "kind": "note", "label": "Starts: ${record.start}" }]
        """#))
        let form = try #require(own.loaded?.form, "\(own.findings)")
        let answers: [String: AnswerValue] = ["record/a/@position": .integer(1), "record/a/start": .text("here")]
        let state = FormState(logic: FormLogic(form: form), answers: answers, metadata: RecordMetadata(start: "2026-11-26T09:30"))
        #expect(state.text("Starts: ${record.start}", at: "n") == "Starts: here")
    }
}

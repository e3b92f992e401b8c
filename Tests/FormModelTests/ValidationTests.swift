import Foundation
import Testing
@testable import FormModel

struct ValidationTests {
    let validator = FormValidator(form: Fixtures.jobForm)

    @Test func aCompleteValidFormHasNoIssues() {
        let report = validator.validate(["site": .text("Depot"), "priority": .choice("low"), "count": .integer(2)])
        #expect(report.isValid)
    }

    @Test func everyIssueIsKeyedByFieldInFormOrderWithAMessageAWorkerUnderstands() {
        let report = validator.validate(["count": .integer(9), "code": .text("abc")])
        #expect(report.issues.map(\.fieldID) == ["site", "priority", "count", "code"])
        #expect(report.issues(for: "site").first?.message == "Required: enter a value.")
        #expect(report.issues(for: "priority").first?.message == "Required: choose an option.")
        #expect(report.issues(for: "count").first?.message == "Enter a whole number between 1 and 5.")
        #expect(report.issues(for: "code").first?.message == "Use the form ABC-123.")
        #expect(report.firstInvalidField == "site")
    }

    @Test func fieldsThatAreNotRelevantAreSkipped() {
        let low = validator.validate(["site": .text("Depot"), "priority": .choice("low")])
        #expect(low.isValid)
        let high = validator.validate(["site": .text("Depot"), "priority": .choice("high")])
        #expect(high.issues.map(\.fieldID) == ["reason"])
    }

    @Test func rawInputIsKeptAndReportedNotDropped() throws {
        let field = try #require(Fixtures.jobForm.field("count"))
        let typed = try #require(AnswerValue.parse("three", for: field))
        #expect(typed == .raw("three"))
        let issues = validator.validate(field: "count", in: ["count": typed])
        #expect(issues.map(\.code) == [.notAWholeNumber])
        #expect(issues.first?.message == "Enter a whole number between 1 and 5.")
    }

    @Test func blankTextCountsAsUnanswered() {
        #expect(validator.validate(field: "site", in: ["site": .text("   ")]).map(\.code) == [.required])
    }

    @Test func lengthPatternAndChoiceConstraints() {
        #expect(validator.validate(field: "site", in: ["site": .text("A very long site name")]).first?.message == "Use at most 10 characters.")
        #expect(validator.validate(field: "code", in: ["code": .text("ABC-12x")]).map(\.code) == [.patternMismatch])
        #expect(validator.validate(field: "code", in: ["code": .text("ABC-123")]).isEmpty)
        #expect(validator.validate(field: "priority", in: ["priority": .choice("urgent")]).first?.message == "Choose one of: Low, High.")
    }

    @Test func aValueOfTheWrongTypeIsNamed() {
        let issues = validator.validate(field: "count", in: ["count": .text("2")])
        #expect(issues.map(\.code) == [.wrongType])
        #expect(issues.first?.message == "This answer is a text, but the field expects a whole number.")
    }

    @Test func answersToUnknownFieldsAreReportedNotDropped() {
        let report = validator.validate(["site": .text("Depot"), "priority": .choice("low"), "colour": .text("red")])
        #expect(report.issues.map(\.code) == [.unknownField])
        #expect(report.issues.first?.fieldID == "colour")
    }

    @Test(arguments: [
        (FieldKind.date, "2026-02-30", "Enter a date as YYYY-MM-DD, like 2026-11-22."),
        (FieldKind.time, "25:00", "Enter a time as HH:MM, like 14:30."),
        (FieldKind.dateTime, "2026-11-22", "Enter a date and time as YYYY-MM-DD HH:MM, like 2026-11-22 14:30."),
        (FieldKind.boolean, "maybe", "Answer yes or no."),
        (FieldKind.decimal, "1,5", "Enter a number, like 2.5."),
        (FieldKind.location, "91, 10", "Enter a location as latitude, longitude and optionally accuracy in metres, like 52.52, 13.40, 5."),
    ])
    func invalidInputOfEachKindGetsAMessageSayingWhatToType(kind: FieldKind, input: String, message: String) throws {
        let field = FieldDefinition(id: "f", kind: kind, label: "F")
        let answer = try #require(AnswerValue.parse(input, for: field))
        #expect(answer == .raw(input))
        #expect(FieldValidator.issues(for: field, answer: answer).map(\.message) == [message])
    }
}

struct AnswerParsingTests {
    @Test(arguments: [
        (FieldKind.integer, " 42 ", AnswerValue.integer(42)),
        (FieldKind.decimal, "2.50", AnswerValue.decimal(Decimal(string: "2.5")!)),
        (FieldKind.boolean, "Yes", AnswerValue.boolean(true)),
        (FieldKind.boolean, "n", AnswerValue.boolean(false)),
        (FieldKind.date, "2024-02-29", AnswerValue.date("2024-02-29")),
        (FieldKind.time, "7:05", AnswerValue.time("07:05")),
        (FieldKind.dateTime, "2026-11-22 14:30", AnswerValue.dateTime("2026-11-22T14:30")),
        (FieldKind.location, "52.52, 13.4, 5", AnswerValue.location(Location(latitude: 52.52, longitude: 13.4, accuracy: 5))),
        (FieldKind.text, "  keep spaces ", AnswerValue.text("  keep spaces ")),
    ])
    func typedInputBecomesTypedAnswers(kind: FieldKind, input: String, expected: AnswerValue) {
        #expect(AnswerValue.parse(input, for: FieldDefinition(id: "f", kind: kind, label: "F")) == expected)
    }

    @Test func choicesAreMatchedByValueLabelOrNumber() {
        let field = FieldDefinition(id: "p", kind: .singleChoice, label: "P", choices: [Choice(value: "low", label: "Low"), Choice(value: "high", label: "High")])
        #expect(AnswerValue.parse("high", for: field) == .choice("high"))
        #expect(AnswerValue.parse("LOW", for: field) == .choice("low"))
        #expect(AnswerValue.parse("2", for: field) == .choice("high"))
        #expect(AnswerValue.parse("3", for: field) == .raw("3"))
        var multiple = field
        multiple.kind = .multipleChoice
        #expect(AnswerValue.parse("1, high, low", for: multiple) == .choices(["low", "high"]))
    }

    @Test func emptyInputMeansNoAnswer() {
        #expect(AnswerValue.parse("  ", for: FieldDefinition(id: "f", kind: .integer, label: "F")) == nil)
    }

    @Test func answersEncodeAsTaggedJSONAndBack() throws {
        let values: [AnswerValue] = [
            .text("a"), .integer(3), .decimal(Decimal(string: "0.1")!), .boolean(true), .date("2026-11-22"), .time("14:30"),
            .dateTime("2026-11-22T14:30"), .choice("x"), .choices(["x", "y"]), .location(Location(latitude: 1, longitude: 2)), .raw("abc"),
        ]
        for value in values {
            let data = try JSONEncoder().encode(value)
            #expect(try JSONDecoder().decode(AnswerValue.self, from: data) == value)
        }
        #expect(String(decoding: try JSONEncoder().encode(AnswerValue.integer(3)), as: UTF8.self) == #"{"integer":3}"#)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(AnswerValue.self, from: Data(#"{"colour":"red"}"#.utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(AnswerValue.self, from: Data(#"{"text":"a","integer":1}"#.utf8)) }
    }
}

import Foundation
import Testing
@testable import FormModel

/// A form written in several languages: every text a person reads holds each language's wording, the
/// definition lists the languages and its default, and a state shows texts (with the answers they name) in the
/// language chosen, falling back to the default; answers never depend on it.
struct FormLanguageTests {
    static let fields = #"""
    [{ "id": "name", "kind": "text", "label": { "English (en)": "Name", "Français (fr)": "Nom" },
       "hint": { "English (en)": "As on the badge", "Français (fr)": "Comme sur le badge" } },
     { "id": "fruit", "kind": "singleChoice", "label": { "English (en)": "Fruit", "Français (fr)": "Fruit préféré" },
       "choices": [{ "value": "apple", "label": { "English (en)": "Apple", "Français (fr)": "Pomme" } },
                   { "value": "pear", "label": "Pear" }] },
     { "id": "age", "kind": "integer", "label": "Age", "constraint": ". < 150",
       "constraintMessage": { "English (en)": "${name} cannot be ${age}.", "Français (fr)": "${name} ne peut pas avoir ${age} ans." } },
     { "id": "code", "kind": "text", "label": "Code", "pattern": "[A-Z]+",
       "patternMessage": { "English (en)": "Capitals, ${name}.", "Français (fr)": "Des majuscules, ${name}." } },
     { "id": "told", "kind": "note", "label": { "English (en)": "${name} likes ${fruit}.", "Français (fr)": "${name} aime ${fruit}." } },
     { "id": "visits", "kind": "repeat", "label": "Visits", "instanceLabel": { "English (en)": "Visit", "Français (fr)": "Visite" },
       "fields": [{ "id": "place", "kind": "text", "label": { "English (en)": "Place", "Français (fr)": "Lieu" } }] }]
    """#
    static let languages = #"""

      "languages": ["English (en)", "Français (fr)"],
      "defaultLanguage": "English (en)",
    """#

    @Test func textsReadInTheChosenLanguageWithTheAnswersTheyName() throws {
        let loaded = Fixtures.load(Fixtures.formJSON(fields: Self.fields, extra: Self.languages))
        let form = try #require(loaded.loaded?.form, "\(loaded.findings)")
        #expect(form.languages == ["English (en)", "Français (fr)"])
        #expect(form.defaultLanguage == "English (en)")
        let name = try #require(form.field("name"))
        #expect(name.label.text == "Name")
        #expect(name.label.text(in: "Français (fr)") == "Nom")
        // A text written as a string reads the same in every language.
        #expect(form.field("age")?.label.text(in: "Français (fr)") == "Age")
        let answers: [String: AnswerValue] = ["name": .text("Ann"), "fruit": .choice("apple"), "age": .integer(200), "code": .text("abc")]
        var state = FormState(logic: FormLogic(form: form), answers: answers)
        let told = try #require(form.field("told"))
        #expect(state.text(told.label, at: "told") == "Ann likes Apple.")
        state.language = "Français (fr)"
        #expect(state.text(told.label, at: "told") == "Ann aime Pomme.")
        #expect(state.text(name.hint ?? "", at: "name") == "Comme sur le badge")
        // A choice with no French label reads its default language's.
        #expect(form.field("fruit")?.label(ofChoice: "pear", in: "Français (fr)") == "Pear")
        #expect(AnswerValue.choice("apple").display(for: form.field("fruit"), language: "Français (fr)") == "Pomme")
        // The form's messages, in the state's language.
        let messages = FormValidator(form: form).validate(state).issues.map(\.message)
        #expect(messages.contains("Ann ne peut pas avoir 200 ans."), "\(messages)")
        #expect(messages.contains("Des majuscules, Ann."), "\(messages)")
        state.language = nil
        let english = FormValidator(form: form).validate(state).issues.map(\.message)
        #expect(english.contains("Ann cannot be 200.") && english.contains("Capitals, Ann."), "\(english)")
        // Switching the language changes no answer and nothing computed.
        var switched = state
        switched.language = "Français (fr)"
        #expect(switched.answers == state.answers && switched.computed == state.computed)
    }

    @Test func aChoiceTypedByItsLabelInAnyLanguage() throws {
        let form = try #require(Fixtures.load(Fixtures.formJSON(fields: Self.fields, extra: Self.languages)).loaded?.form)
        let fruit = try #require(form.field("fruit"))
        #expect(AnswerValue.parse("pomme", for: fruit) == .choice("apple"))
        #expect(AnswerValue.parse("Apple", for: fruit) == .choice("apple"))
    }

    @Test func theDefinitionRoundTripsAndTheDefaultIsTheFirstLanguageWhenUnnamed() throws {
        let extra = #"""

          "languages": ["Français (fr)", "English (en)"],
        """#
        let form = try #require(Fixtures.load(Fixtures.formJSON(fields: Self.fields, extra: extra)).loaded?.form)
        #expect(form.defaultLanguage == "Français (fr)")
        #expect(form.field("name")?.label.text == "Nom")
        let data = try JSONEncoder().encode(form)
        let again = try JSONDecoder().decode(FormDefinition.self, from: data)
        #expect(again == form)
        // A form in one language encodes no languages and its texts as strings.
        let plain = try JSONEncoder().encode(Fixtures.jobForm)
        let text = String(decoding: plain, as: UTF8.self)
        #expect(!text.contains("languages") && text.contains(#""label":"Site""#), "\(text)")
    }

    @Test func aLanguageIsFoundByItsCodeOrName() throws {
        let form = try #require(Fixtures.load(Fixtures.formJSON(fields: Self.fields, extra: Self.languages)).loaded?.form)
        #expect(form.language(named: "fr") == "Français (fr)")
        #expect(form.language(named: "FR") == "Français (fr)")
        #expect(form.language(named: "français") == "Français (fr)")
        #expect(form.language(named: "English (en)") == "English (en)")
        #expect(form.language(named: "de") == nil)
        #expect(Fixtures.jobForm.language(named: "en") == nil)
    }

    @Test func languagesTheFormDoesNotListAreErrorsAtTheirPlace() {
        let unknown = Fixtures.load(Fixtures.formJSON(fields: #"""
        [{ "id": "name", "kind": "text", "label": { "English (en)": "Name", "Deutsch (de)": "Name" } }]
        """#, extra: Self.languages))
        #expect(unknown.loaded == nil)
        let finding = unknown.findings.first { $0.rule == "language-unknown" }
        #expect(finding?.path.description.contains("label") == true, "\(unknown.findings)")
        #expect(finding?.message.contains("Deutsch (de)") == true)
        let noLanguages = Fixtures.load(Fixtures.formJSON(fields: #"""
        [{ "id": "name", "kind": "text", "label": { "English (en)": "Name" } }]
        """#))
        #expect(noLanguages.findings.contains { $0.rule == "language-unknown" && $0.message.contains("it lists none") }, "\(noLanguages.findings)")
        let badDefault = Fixtures.load(Fixtures.formJSON(fields: #"[{ "id": "name", "kind": "text", "label": "Name" }]"#, extra: #"""

          "languages": ["English (en)", "Français (fr)"], "defaultLanguage": "fr",
        """#))
        #expect(badDefault.findings.contains { $0.rule == "language-unknown" && $0.message.contains("\"fr\"") }, "\(badDefault.findings)")
    }

    /// A `${name}` in any language's text is checked like one in the default's.
    @Test func referencesInEveryLanguageAreChecked() {
        let result = Fixtures.load(Fixtures.formJSON(fields: #"""
        [{ "id": "name", "kind": "text", "label": { "English (en)": "Name", "Français (fr)": "Nom de ${nobody}" } }]
        """#, extra: Self.languages))
        #expect(result.loaded == nil)
        #expect(result.findings.contains { $0.message.contains("nobody") }, "\(result.findings)")
    }
}

/// `position()`: the number of the repeat instance an expression is evaluated in, among the live ones.
struct PositionTests {
    @Test func positionIsTheInstancesNumberAmongTheLiveOnes() throws {
        let loaded = Fixtures.load(Fixtures.formJSON(fields: #"""
        [{ "id": "defects", "kind": "repeat", "label": "Defects", "instanceLabel": "Defect", "fields": [
            { "id": "where", "kind": "text", "label": "Where" },
            { "id": "number", "kind": "calculate", "label": "Number", "calculation": "position()" },
            { "id": "title", "kind": "note", "label": "Defect ${number} of ${where}" }] }]
        """#))
        let form = try #require(loaded.loaded?.form, "\(loaded.findings)")
        var answers: [String: AnswerValue] = [:]
        for (id, position) in [("a", 1), ("b", 2), ("c", 3)] {
            answers["defects/\(id)/@position"] = .integer(position)
            answers["defects/\(id)/where"] = .text("place \(id)")
        }
        answers["defects/b/@removed"] = .boolean(true)
        let state = FormState(logic: FormLogic(form: form), answers: answers)
        #expect(state.value("defects/a/number")?.display() == "1")
        #expect(state.value("defects/c/number")?.display() == "2", "the removed instance is not counted")
        #expect(state.text("Defect ${number} of ${where}", at: "defects/c/title") == "Defect 2 of place c")
    }

    @Test func positionOutsideARepeatIsAnError() {
        let result = Fixtures.load(Fixtures.formJSON(fields: #"[{ "id": "n", "kind": "calculate", "label": "N", "calculation": "position()" }]"#))
        #expect(result.loaded == nil)
        #expect(result.findings.contains { $0.rule == "calculation-position-outside-repeat" }, "\(result.findings)")
    }
}

/// `indexed-repeat(group.field, n)`: a field of the repeat instance numbered n, from outside the repeat or from
/// another instance of it (the previous one, with position()).
struct IndexedRepeatTests {
    static let form = Fixtures.formJSON(fields: #"""
    [{ "id": "visits", "kind": "repeat", "label": "Visits", "instanceLabel": "Visit", "fields": [
        { "id": "reading", "kind": "integer", "label": "Reading" },
        { "id": "change", "kind": "calculate", "label": "Change", "calculation": "reading - indexed-repeat(visits.reading, position() - 1)" }] },
     { "id": "second", "kind": "calculate", "label": "Second", "calculation": "indexed-repeat(visits.reading, 2)" },
     { "id": "tenth", "kind": "calculate", "label": "Tenth", "calculation": "coalesce(indexed-repeat(visits.reading, 10), 'none')" }]
    """#)

    @Test func readsTheNumberedInstanceFromOutsideAndFromAnotherInstance() throws {
        let loaded = Fixtures.load(Self.form)
        let form = try #require(loaded.loaded?.form, "\(loaded.findings)")
        var answers: [String: AnswerValue] = [:]
        for (id, position, reading) in [("a", 1, 10), ("b", 2, 15), ("c", 3, 22)] {
            answers["visits/\(id)/@position"] = .integer(position)
            answers["visits/\(id)/reading"] = .integer(reading)
        }
        var state = FormState(logic: FormLogic(form: form), answers: answers)
        #expect(state.value("second")?.display() == "15")
        #expect(state.value("tenth")?.display() == "none", "no tenth instance: null")
        #expect(state.value("visits/a/change") == nil, "the first has no previous instance")
        #expect(state.value("visits/b/change")?.display() == "5")
        #expect(state.value("visits/c/change")?.display() == "7")
        // An edit of one instance evaluates again the next one, which reads it.
        let changed = state.apply(["visits/b/reading": .integer(20)])
        #expect(changed.contains("visits/c/change"))
        #expect(state.value("visits/c/change")?.display() == "2")
        #expect(state.value("second")?.display() == "20")
        // Removing an instance renumbers the live ones.
        state.apply(["visits/b/@removed": .boolean(true)])
        #expect(state.value("second")?.display() == "22")
        #expect(state.value("visits/c/change")?.display() == "12")
    }

    @Test func theFirstArgumentMustBeARepeatsField() {
        for calculation in ["indexed-repeat(second, 1)", "indexed-repeat(1, 1)", "indexed-repeat(visits, 1)"] {
            let result = Fixtures.load(Self.form.replacingOccurrences(of: "indexed-repeat(visits.reading, 2)", with: calculation))
            #expect(result.loaded == nil, "\(calculation)")
            #expect(result.findings.contains { $0.rule == "calculation-unknown-field" && $0.message.contains("indexed-repeat()") }, "\(calculation): \(result.findings)")
        }
    }
}

/// Kept calculations: `once(value)` and `uuid()` are computed once, stored as the field's answer and read from then on.
struct KeptCalculationTests {
    static let form = Fixtures.formJSON(fields: #"""
    [{ "id": "name", "kind": "text", "label": "Name" },
     { "id": "first_name", "kind": "calculate", "label": "First name given", "calculation": "once(name)" },
     { "id": "key", "kind": "calculate", "label": "Key", "calculation": "uuid()" },
     { "id": "shown", "kind": "text", "label": "Shown", "relevant": "name != null" }]
    """#)

    @Test func aKeptValueIsComputedOnceAndReadFromItsStoredAnswer() throws {
        let loaded = Fixtures.load(Self.form)
        let form = try #require(loaded.loaded?.form, "\(loaded.findings)")
        let logic = FormLogic(form: form)
        #expect(logic.kept == ["first_name", "key"])
        // A new record starts with its uuid(); once(name) has nothing to keep yet.
        let validator = FormValidator(form: form)
        let defaults = validator.defaults
        let key = try #require(defaults["key"]?.display())
        #expect(key.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/) != nil, "\(key)")
        #expect(defaults["first_name"] == nil)
        #expect(validator.defaults["key"] != defaults["key"], "each record its own")

        var state = FormState(logic: logic, answers: defaults)
        #expect(state.value("key")?.display() == key, "read from the stored answer, not computed again")
        #expect(state.valuesToKeep.isEmpty)
        state.apply(["name": .text("Ann")])
        #expect(state.valuesToKeep == ["first_name": .text("Ann")])
        state.apply(state.valuesToKeep)
        state.apply(["name": .text("Bob")])
        #expect(state.value("first_name") == .text("Ann"), "once(): the first value stays")
        #expect(state.valuesToKeep.isEmpty)
        // Stored kept values are answers the form takes: neither refused on the way in nor at completion.
        #expect(validator.draftIssue("key", .text(key)) == nil)
        #expect(validator.draftIssue("key", .location(Location(latitude: 1, longitude: 2))) != nil)
        #expect(!validator.validate(state).issues.contains { $0.fieldID == "key" || $0.fieldID == "first_name" }, "\(validator.validate(state).issues)")
        // Without its stored answer, uuid() gives another value each time.
        #expect(FormState(logic: logic, answers: [:]).value("key") != FormState(logic: logic, answers: [:]).value("key"))
    }

    @Test func onlyCalculationsAndDefaultsKeepAValue() {
        let result = Fixtures.load(Self.form.replacingOccurrences(of: #""relevant": "name != null""#, with: #""relevant": "once(name) != null""#))
        #expect(result.loaded == nil)
        #expect(result.findings.contains { $0.rule == "relevance-kept-function" }, "\(result.findings)")
    }
}

/// The form's own words for a required field's missing answer, in the state's language and showing answers; a
/// page title's references are checked like a field's.
struct RequiredMessageTests {
    @Test func aRequiredFieldSaysWhatTheFormSays() throws {
        let loaded = Fixtures.load(Fixtures.formJSON(fields: #"""
        [{ "id": "name", "kind": "text", "label": "Name" },
         { "id": "age", "kind": "integer", "label": "Age", "required": true,
           "requiredMessage": { "English (en)": "${name} needs an age.", "Français (fr)": "Il faut l'âge de ${name}." } },
         { "id": "city", "kind": "text", "label": "City", "required": { "expression": "age > 1" }, "requiredMessage": "City of ${name}, please." },
         { "id": "plain", "kind": "text", "label": "Plain", "required": true }]
        """#, extra: FormLanguageTests.languages))
        let form = try #require(loaded.loaded?.form, "\(loaded.findings)")
        var state = FormState(logic: FormLogic(form: form), answers: ["name": .text("Ann")])
        var messages = FormValidator(form: form).validate(state).issues.map(\.message)
        #expect(messages.contains("Ann needs an age.") && messages.contains("Required: enter a value."), "\(messages)")
        state = FormState(logic: FormLogic(form: form), answers: ["name": .text("Ann"), "age": .integer(3)])
        state.language = "Français (fr)"
        messages = FormValidator(form: form).validate(state).issues.map(\.message)
        #expect(messages.contains("City of Ann, please."), "\(messages)")
        state = FormState(logic: FormLogic(form: form), answers: ["name": .text("Ann")])
        state.language = "Français (fr)"
        #expect(FormValidator(form: form).validate(state).issues.map(\.message).contains("Il faut l'âge de Ann."))
    }

    @Test func aPageTitlesReferencesAreChecked() {
        let result = Fixtures.load(#"""
        { "id": "job", "version": 1, "title": "Job", "completionLabel": "Create",
          "pages": [{ "id": "main", "title": "About ${nobody}", "fields": [{ "id": "name", "kind": "text", "label": "Name" }] }] }
        """#)
        #expect(result.loaded == nil)
        #expect(result.findings.contains { $0.path.description.contains("title") && $0.message.contains("nobody") }, "\(result.findings)")
    }
}

import FormModel
import Foundation
import Testing
@testable import XLSForm

@Suite struct XLSFormConverterTests {
    typealias F = WorkbookFixtures

    @Test func topLevelGroupsArePagesAndUngroupedRowsGetAPageOfTheirOwn() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("text", "first", "First"),
            F.row("begin_group", "site", "Site", relevant: "${first} != 'skip'"),
            F.row("text", "site_name", "Site name", required: "yes"),
            F.row("begin group", "inner", "Inner", relevant: "${site_name} != ''"),
            F.row("integer", "storeys", "Storeys"),
            F.row("end group", nil),
            F.row("end_group", nil),
            F.row("note", "bye", "Thanks"),
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(form.pages.map(\.id) == ["page_1", "site", "page_3"])
        #expect(form.pages[1].title == "Site")
        #expect(form.pages.map { $0.fields.map(\.id) } == [["first"], ["site_name", "storeys"], ["bye"]])
        // The groups' relevance is carried by each field they hold.
        #expect(F.field("site_name", in: form)?.relevant == "first != 'skip'")
        #expect(F.field("storeys", in: form)?.relevant == "(first != 'skip') and (site_name != '')")
        #expect(F.field("site_name", in: form)?.required == true)
        #expect(result.findings.contains { $0.rule == "xlsform-group-flattened" && $0.cell == "survey!C5" })
    }

    @Test func repeatsHoldTheirFieldsAndAreReadFromOutsideByPath() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("integer", "how_many", "How many"),
            F.row("begin_repeat", "defects", "Defect", repeatCount: "${how_many}"),
            F.row("select_one severity", "severity", "Severity"),
            F.row("select_one action", "action", "Action", choiceFilter: "severity = ${severity}"),
            F.row("decimal", "cost", "Cost", constraint: ". >= 0"),
            F.row("end_repeat", nil),
            F.row("begin_repeat", "visits", "Visit", repeatCount: "2"),
            F.row("date", "day", "Day"),
            F.row("end_repeat", nil),
            F.row("calculate", "total", calculation: "sum(${cost})"),
        ], choices: [
            ["list_name", "name", "label", "severity"],
            ["severity", "low", "Low", nil], ["severity", "high", "High", nil],
            ["action", "note", "Note", "low"], ["action", "repair", "Repair", "high"],
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        let defects = try #require(F.field("defects", in: form))
        #expect(defects.kind == .repeat)
        #expect(defects.fields?.map(\.id) == ["severity", "action", "cost"])
        #expect(defects.countFrom == "how_many")
        #expect(F.field("visits", in: form)?.minCount == 2 && F.field("visits", in: form)?.maxCount == 2)
        #expect(F.field("action", in: form)?.choiceFilter == "choice.severity == severity")
        #expect(F.field("action", in: form)?.choices?.map(\.properties) == [["severity": "low"], ["severity": "high"]])
        #expect(F.field("total", in: form)?.calculation == "sum(defects.cost)")
        #expect(F.field("total", in: form)?.label == "total")
    }

    @Test func defaultsAreTypedOrExpressions() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("integer", "n", "N", default: "3"),
            F.row("select_multiple colours", "c", "C", default: "red blue"),
            F.row("date", "d", "D", default: "today()"),
            F.row("acknowledge", "ok", "OK", default: "OK"),
        ], choices: [["list_name", "name", "label"], ["colours", "red", "Red"], ["colours", "blue", "Blue"]])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(F.field("n", in: form)?.defaultValue == .integer(3))
        #expect(F.field("c", in: form)?.defaultValue == .choices(["red", "blue"]))
        #expect(F.field("d", in: form)?.defaultExpression == "today()")
        #expect(F.field("ok", in: form)?.defaultValue == .boolean(true))
    }

    @Test func settingsNameTheFormAndTheDefaultLanguageIsImported() throws {
        let result = try F.load(survey: [
            ["type", "name", "label::English (en)", "label::Français (fr)", "hint::English (en)"],
            ["text", "site", "Site", "Site", "As on the board"],
        ], settings: [["form_title", "form_id", "version", "default_language", "public_key"], ["Site Visit", "Site_Visit", "2026112301", "English (en)", "abc"]])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(form.id == "site-visit" && form.version == 2_026_112_301 && form.title == "Site Visit")
        #expect(F.field("site", in: form)?.hint == "As on the board")
        #expect(form.languages == ["English (en)", "Français (fr)"] && form.defaultLanguage == "English (en)")
        let warnings = result.findings.filter { $0.severity == .warning }.map { "\($0.cell ?? "") \($0.rule)" }
        #expect(!warnings.contains("survey!D1 xlsform-not-imported"), "\(warnings)")  // Français is imported
        #expect(warnings.contains("settings!B2 xlsform-form-id"))
        #expect(warnings.contains("settings!E2 xlsform-not-imported"))  // public_key
    }

    /// Every language of a workbook is imported: labels, hints, constraint messages, group titles, repeat
    /// names and choice labels, each in the languages its row has; `default_language` chooses the default, an
    /// untranslated column beside translated ones is pyxform's language `default`.
    @Test func everyLanguageOfAWorkbookIsImported() throws {
        let result = try F.load(survey: [
            ["type", "name", "label::English (en)", "label::Français (fr)", "hint::Français (fr)", "constraint", "constraint_message::English (en)", "constraint_message::Français (fr)"],
            ["begin_group", "site", "Site", "Lieu", nil, nil, nil, nil],
            ["text", "name", "Name", "Nom", "Comme écrit", nil, nil, nil],
            ["integer", "age", "Age of ${name}", "Âge de ${name}", nil, ". < 150", "Too old", "Trop vieux"],
            ["select_one fruit", "fruit", "Fruit", nil, nil, nil, nil, nil],
            ["end_group", nil, nil, nil, nil, nil, nil, nil],
            ["begin_repeat", "visit", "Visit", "Visite", nil, nil, nil, nil],
            ["text", "place", "Place", "Endroit", nil, nil, nil, nil],
            ["end_repeat", nil, nil, nil, nil, nil, nil, nil],
        ], choices: [
            ["list_name", "name", "label::English (en)", "label::Français (fr)"],
            ["fruit", "apple", "Apple", "Pomme"], ["fruit", "pear", "Pear", nil],
        ], settings: [["form_title", "form_id", "default_language"], ["Visit", "visit", "Français (fr)"]])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(form.languages == ["English (en)", "Français (fr)"])
        #expect(form.defaultLanguage == "Français (fr)")
        let fr = "Français (fr)", en = "English (en)"
        #expect(form.pages.first?.title?.text(in: en) == "Site" && form.pages.first?.title?.text == "Lieu")
        #expect(F.field("name", in: form)?.label.text(in: en) == "Name" && F.field("name", in: form)?.label.text == "Nom")
        #expect(F.field("name", in: form)?.hint?.text(in: en) == "Comme écrit")  // only in French: every language reads it
        #expect(F.field("age", in: form)?.label.text(in: en) == "Age of ${name}" && F.field("age", in: form)?.label.text(in: fr) == "Âge de ${name}")
        #expect(F.field("age", in: form)?.constraintMessage?.text(in: en) == "Too old" && F.field("age", in: form)?.constraintMessage?.text(in: fr) == "Trop vieux")
        #expect(F.field("fruit", in: form)?.label.text(in: fr) == "Fruit")
        #expect(F.field("fruit", in: form)?.label(ofChoice: "apple", in: fr) == "Pomme")
        #expect(F.field("fruit", in: form)?.label(ofChoice: "apple", in: en) == "Apple")
        #expect(F.field("fruit", in: form)?.label(ofChoice: "pear", in: fr) == "Pear")
        #expect(F.field("visit", in: form)?.label.text(in: fr) == "Visite")
        #expect(F.field("place", in: form)?.label.text(in: en) == "Place")
        #expect(!result.findings.contains { $0.rule == "xlsform-not-imported" && $0.message.contains("Labels in") }, "\(result.findings)")
    }

    @Test func anUntranslatedLabelBesideTranslatedOnesIsTheLanguageDefault() throws {
        let result = try F.load(survey: [
            ["type", "name", "label", "label::Español (es)"],
            ["text", "name", "Name", "Nombre"],
            ["text", "city", "City", nil],
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(form.languages == ["default", "Español (es)"] && form.defaultLanguage == "default")
        #expect(F.field("name", in: form)?.label.text(in: "Español (es)") == "Nombre")
        #expect(F.field("city", in: form)?.label.text(in: "Español (es)") == "City")
        // One translated language and no untranslated label: a form in one language, as before.
        let single = try F.load(survey: [["type", "name", "label::English (en)"], ["text", "name", "Name"]])
        let one = try #require(single.loaded?.form, "\(single.findings)")
        #expect(one.languages.isEmpty && F.field("name", in: one)?.label == "Name")
    }

    /// `required_message` (in every language, showing answers) is the field's requiredMessage.
    @Test func aRequiredMessageIsImported() throws {
        let result = try F.load(survey: [
            ["type", "name", "label", "required", "required_message", "required_message::Français (fr)", "label::Français (fr)"],
            ["text", "name", "Name", nil, nil, nil, "Nom"],
            ["integer", "age", "Age", "yes", "${name} needs an age", "Il faut l'âge de ${name}", "Âge"],
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        let message = try #require(F.field("age", in: form)?.requiredMessage)
        #expect(message.text(in: "default") == "${name} needs an age" && message.text(in: "Français (fr)") == "Il faut l'âge de ${name}")
        #expect(!result.findings.contains { $0.message.contains("required_message") }, "\(result.findings)")
    }

    /// `begin loop over LIST`: a group per choice (and other, added by an or_other question on the list), each
    /// with the loop's questions, `%(label)s` the choice's label in each language; cells name the loop's rows.
    @Test func aLoopIsAGroupPerChoice() throws {
        let result = try F.load(survey: [
            ["type", "name", "label::English", "label::Français"],
            ["select_multiple toilet or_other", "toilets", "Toilets", "Toilettes"],
            ["begin loop over toilet", "per_toilet", "Per toilet", "Par toilette"],
            ["integer", "number", "How many %(label)s?", "Combien de %(label)s ?"],
            ["end loop", nil, nil, nil],
        ], choices: [
            ["list_name", "name", "label::English", "label::Français"],
            ["toilet", "pit", "Pits", "fosses"], ["toilet", "flush", "Flush toilets", "chasses d'eau"],
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        let page = try #require(form.pages.first { $0.id == "per_toilet" })
        #expect(page.fields.map(\.id) == ["number", "flush_number", "other_number"])
        #expect(page.fields[0].label.text(in: "English") == "How many Pits?" && page.fields[0].label.text(in: "Français") == "Combien de fosses ?")
        #expect(page.fields[2].label.text(in: "English") == "How many Other?")
        #expect(result.findings.contains { $0.rule == "xlsform-name" && $0.cell == "survey!B4" }, "renamed copies name the loop's row: \(result.findings)")
        let missing = try F.load(survey: [["type", "name", "label"], ["begin loop over nothing", "l", "L"], ["integer", "n", "N"], ["end loop", nil, nil]])
        #expect(missing.findings.contains { $0.rule == "xlsform-loop" && $0.cell == "survey!A2" && $0.message.contains("not in the choices sheet") }, "\(missing.findings)")
    }

    /// A note holds no answer: an expression reading one reads nothing (ODK reads it as empty text), warned
    /// about naming the cell.
    @Test func anExpressionReadingANoteReadsNothing() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("note", "intro", "Welcome"),
            F.row("calculate", "same", nil, calculation: "if(${intro} = ${intro}, 'success', 'error')"),
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(F.field("same", in: form)?.calculation == "if(null == null, 'success', 'error')")
        #expect(result.findings.contains { $0.rule == "xlsform-note-value" && $0.cell == "survey!F3" }, "\(result.findings)")
    }

    /// What pyxform's older workbooks hold reads as pyxform reads it: `bind:relevant` and `bind:constraint`
    /// headers, the `imei` metadata row, a time default stored as a time, and nothing after 60 empty rows.
    @Test func olderWorkbooksReadAsPyxformReadsThem() throws {
        var survey: [[CellValue?]] = [
            [.text("type"), .text("name"), .text("label"), .text("bind:relevant"), .text("bind:constraint"), .text("bind:jr:constraintMsg"), .text("default")],
            [.text("imei"), .text("imei"), nil, nil, nil, nil, nil],
            [.text("integer"), .text("age"), .text("Age"), nil, .text(". < 150"), .text("Too old"), nil],
            [.text("text"), .text("name"), .text("Name"), .text("${age} >= 18"), nil, nil, nil],
            [.text("time"), .text("start_time"), .text("Start"), nil, nil, nil, .number(0.395833333333333)],
        ]
        survey += Array(repeating: [nil], count: 61)
        survey.append([.text("party like it's 1999"), .text("late"), .text("Late")])
        let data = try WorkbookWriter().write([("survey", survey), ("settings", [[.text("form_title")], [.text("Old")]])])
        let result = XLSFormImporter().load(try WorkbookReader().read(data), file: "old.xlsx")
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(F.field("name", in: form)?.relevant == "age >= 18")
        #expect(F.field("age", in: form)?.constraint == ". < 150" && F.field("age", in: form)?.constraintMessage == "Too old")
        #expect(F.field("start_time", in: form)?.defaultValue == .time("09:30"))
        #expect(F.field("imei", in: form) == nil && F.field("late", in: form) == nil)
        #expect(result.findings.contains { $0.cell == "survey!A67" && $0.rule == "xlsform-not-imported" && $0.message.contains("after more than 60 empty rows") },
                "\(result.findings)")
    }

    /// Each malformed workbook is refused with a finding naming the cell, in the linter's format.
    static let refusals: [(String, [[String?]], [[String?]]?, String, String)] = [
        ("group without end", [F.header, F.row("begin_group", "g", "G"), F.row("text", "a", "A")], nil, "survey!A2", "never closed"),
        ("end without begin", [F.header, F.row("text", "a", "A"), F.row("end_repeat", nil)], nil, "survey!A3", "closes nothing"),
        ("crossed ends", [F.header, F.row("begin_repeat", "r", "R"), F.row("text", "a", "A"), F.row("end_group", nil)], nil, "survey!A4", "closes the repeat r"),
        ("missing list", [F.header, F.row("select_one colours", "c", "C")], [["list_name", "name", "label"], ["yes_no", "yes", "Yes"]], "survey!A2", "The list colours is not in the choices sheet"),
        ("duplicate name", [F.header, F.row("text", "a", "A"), F.row("integer", "a", "B")], nil, "survey!B3", "already used at survey!B2"),
        ("unknown type", [F.header, F.row("colour", "a", "A")], nil, "survey!A2", "not a question type"),
        ("background recording", [F.header, F.row("background-audio", "p", "Sound")], nil, "survey!A2", "no FieldSheet equivalent"),
        ("untranslatable", [F.header, F.row("date", "a", "A"), F.row("integer", "b", "B", relevant: "pulldata('fruits', 'name', 'key', ${a}) = 'x'")], nil, "survey!D3", "pulldata() looks up the rows of the CSV file fruits.csv by its column 'key'"),
        ("choices from a file that is no entity list", [F.header, F.row("select_one_from_file trees.geojson", "tree", "Tree")], nil, "survey!A2", "from a file attached to the form that is no entity list"),
        ("external choices without the sheet", [F.header, F.row("select_one_external trees", "tree", "Tree")], nil, "survey!A2", "The list trees is not in the external_choices sheet"),
        ("select_multiple_external, which XLSForm has not", [F.header, F.row("select_multiple_external trees", "tree", "Tree")], nil, "survey!A2", "not a question type"),
        ("osm", [F.header, F.row("osm building_tags", "building", "Building")], nil, "survey!A2", "no FieldSheet equivalent"),
        ("unknown reference", [F.header, F.row("integer", "a", "A", constraint: ". > ${b}")], nil, "survey!E2", "${b} names no question"),
        ("group reference", [F.header, F.row("begin_group", "g", "G"), F.row("text", "a", "A", relevant: "${g} = 1"), F.row("end_group", nil)], nil, "survey!D3", "is a group"),
        ("required condition that does not translate", [F.header, F.row("integer", "a", "A"), F.row("text", "b", "B", required: "${c} > 1")], nil, "survey!G3", "${c} names no question"),
        ("bad name", [F.header, F.row("text", "site name", "Site")], nil, "survey!B2", "cannot be a FieldSheet field id"),
        ("missing label", [F.header, F.row("text", "a", nil)], nil, "survey!C2", "has no label"),
        ("bad default", [F.header, F.row("integer", "a", "A", default: "many")], nil, "survey!J2", "not a whole number"),
        ("or_other on a question that is no select", [F.header, F.row("text or_other", "a", "A")], nil, "survey!A2", "not a question type"),
        ("repeat count that is no count", [F.header, F.row("begin_repeat", "r", "R", repeatCount: "0"), F.row("text", "a", "A"), F.row("end_repeat", nil)],
         nil, "survey!I2", "neither a whole number"),
    ]

    @Test(arguments: refusals)
    func malformedWorkbooksAreRefusedNamingTheCell(name: String, survey: [[String?]], choices: [[String?]]?, cell: String, message: String) throws {
        let result = try F.load(survey: survey, choices: choices)
        #expect(result.loaded == nil, "\(name) loaded")
        let errors = result.findings.filter { $0.severity == .error }
        #expect(errors.contains { $0.cell == cell && $0.message.contains(message) }, "\(name): \(errors.map(\.description))")
        let printed = try #require(errors.first?.description)
        #expect(printed.hasPrefix("form.xlsx: error[xlsform-") && printed.contains("\n    fix: "), "\(printed)")
    }

    @Test func aLoneSheetIsReadAsTheSurvey() throws {
        let data = try WorkbookWriter().write([("Sheet1", F.text([["type", "name", "label"], ["text", "a", "A"]]))])
        let result = XLSFormImporter().load(try WorkbookReader().read(data), file: "form.xlsx")
        // The sheet read as the survey, and the title taken from the file's name: each a warning.
        #expect(result.findings.filter { $0.severity == .warning }.map { "\($0.cell ?? "") \($0.rule)" } == ["Sheet1 xlsform-sheet", "settings xlsform-title"])
        #expect(result.definition?.contains("\"id\": \"a\"") == true)
    }

    @Test func aWorkbookWithoutASurveySheetIsRefused() throws {
        let data = try WorkbookWriter().write([("questions", F.text([["type", "name"], ["text", "a"]])), ("settings", [])])
        let result = XLSFormImporter().load(try WorkbookReader().read(data), file: "form.xlsx")
        #expect(result.findings.map(\.description).first?.hasPrefix("form.xlsx: error[xlsform-sheet] survey: The workbook has no survey sheet") == true)
    }

    @Test func findingsAboutTheConvertedFormNameTheirCells() throws {
        // A popover of several steps: the linter's finding, naming the presentation setting's cell.
        let popover = [["form_title", "presentation", "anchor"], ["Quick", "popover", "more"]] as [[String?]]
        let data = try F.data(survey: [F.header, F.row("begin_group", "a", "A"), F.row("text", "x", "X"), F.row("end_group", nil),
                                       F.row("begin_group", "b", "B"), F.row("text", "y", "Y"), F.row("end_group", nil)], settings: popover)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("popover-\(UUID().uuidString).xlsx")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let findings = FormFiles().lint(files: [file.path])
        let finding = try #require(findings.first { $0.rule == "popover-multi-step" })
        #expect(finding.cell == "settings!B2" && finding.location == nil)
        #expect(finding.description.contains("error[popover-multi-step] settings!B2: A popover holds a quick task"))
        // A relevance cycle found by the form checker names the relevant cell.
        let cycle = try F.load(survey: [F.header, F.row("text", "a", "A", relevant: "${b} = 'x'"), F.row("text", "b", "B", relevant: "${a} = 'y'")])
        #expect(cycle.loaded == nil)
        #expect(cycle.findings.contains { $0.severity == .error && ($0.cell == "survey!D2" || $0.cell == "survey!D3") }, "\(cycle.findings)")
    }

    /// `required` written as a condition: required while it holds, checked at completion like any rule.
    @Test func requiredAsAConditionIsRequiredWhileItHolds() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("integer", "age", "Age"),
            F.row("text", "guardian", "Guardian", required: "${age} < 18"),
            F.row("text", "note_text", "Note", required: "false()"),
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        let guardian = try #require(F.field("guardian", in: form))
        #expect(guardian.required == false && guardian.requiredExpression == "age < 18")
        #expect(F.field("note_text", in: form)?.required == false && F.field("note_text", in: form)?.requiredExpression == nil)
        let validator = FormValidator(form: form)
        #expect(validator.validate(["age": .integer(12)]).issues.map(\.fieldID) == ["guardian"])
        #expect(validator.validate(["age": .integer(12)]).issues.first?.code == .required)
        #expect(validator.validate(["age": .integer(40)]).issues.isEmpty)
        #expect(validator.validate(["age": .integer(12), "guardian": .text("Ann")]).issues.isEmpty)
        #expect(result.definition?.contains(#""required": {"#) == true, "\(result.definition ?? "")")
    }

    /// The cascading select: a county named like one of another state. As in pyxform, the settings allow the
    /// duplicate names (allow_choice_duplicates); the choice_filter tells them apart.
    @Test func duplicateChoiceNamesImportWhenAllowedAndAFilterTellsThemApart() throws {
        let survey = [F.header, F.row("select_one state", "state", "State"), F.row("select_one county", "county", "County", choiceFilter: "state = ${state}")]
        let choices: [[String?]] = [
            ["list_name", "name", "label", "state"], ["state", "il", "Illinois", nil], ["state", "mo", "Missouri", nil],
            ["county", "springfield", "Springfield", "il"], ["county", "springfield", "Springfield", "mo"], ["county", "cook", "Cook", "il"],
        ]
        let allow: [[String?]] = [["form_title", "allow_choice_duplicates"], ["Counties", "yes"]]
        let allowed = try F.load(survey: survey, choices: choices, settings: allow)
        let form = try #require(allowed.loaded?.form, "\(allowed.findings)")
        #expect(F.field("county", in: form)?.choices?.map(\.value) == ["springfield", "springfield", "cook"])
        #expect(!allowed.findings.contains { $0.cell == "settings!B2" }, "the setting is read, not warned about")
        let validator = FormValidator(form: form)
        #expect(validator.validate(["state": .choice("mo"), "county": .choice("springfield")]).issues.isEmpty)
        #expect(validator.validate(["state": .choice("mo"), "county": .choice("cook")]).issues.map(\.code) == [.notAChoice])
        // Without the setting, as in pyxform, the duplicate is refused naming its cell.
        let refused = try F.load(survey: survey, choices: choices)
        #expect(refused.loaded == nil)
        #expect(refused.findings.contains { $0.severity == .error && $0.cell == "choices!B5" && $0.fix.contains("allow_choice_duplicates") })
        // Allowed, but offered by a question without a choice_filter: nothing would tell them apart.
        let unfiltered = try F.load(survey: [F.header, F.row("select_one county", "county", "County")], choices: choices, settings: allow)
        #expect(unfiltered.loaded == nil)
        #expect(unfiltered.findings.contains { $0.rule == "duplicate-choice" && $0.cell?.hasPrefix("choices!") == true }, "\(unfiltered.findings)")
    }

    /// A choice_filter comparing a column with an unquoted word (`pastel=yes`) reads the word as another column
    /// (pyxform and ODK read it as a path to no value): refused naming the cell, and when the word is a value
    /// of the choices' columns, the fix says to quote it.
    @Test func aFilterComparingWithAnUnquotedWordIsRefusedWithTheQuotedWordAsTheFix() throws {
        let choices: [[String?]] = [["list_name", "name", "label", "pastel"], ["colors", "red", "Red", "no"], ["colors", "mauve", "Mauve", "yes"]]
        let result = try F.load(survey: [F.header, F.row("select_one colors", "fav_pastel", "Pastel", choiceFilter: "pastel=yes")], choices: choices)
        #expect(result.loaded == nil)
        let finding = try #require(result.findings.first { $0.rule == "choice-filter-unknown-property" }, "\(result.findings)")
        #expect(finding.cell == "survey!H2" && finding.fix.contains("If \"yes\" is the text the choices' pastel holds, write it in quotes: 'yes'."), "\(finding)")
        let quoted = try F.load(survey: [F.header, F.row("select_one colors", "fav_pastel", "Pastel", choiceFilter: "pastel='yes'")], choices: choices)
        #expect(quoted.loaded != nil, "\(quoted.findings)")
    }

    /// `${name}` in labels, hints and messages is part of the form: written as FieldSheet reads it from where
    /// the question stands, checked, and shown with the answers.
    @Test func labelsHintsAndMessagesReferToAnswers() throws {
        let header: [String?] = ["type", "name", "label", "hint", "constraint", "constraint_message"]
        let result = try F.load(survey: [
            header,
            ["text", "full_name", "Name", nil, nil, nil],
            ["begin_repeat", "defects", "Defect", nil, nil, nil],
            ["decimal", "cost", "Cost for ${full_name}", "Paid by ${full_name}", ". < 100", "${full_name} pays less than 100"],
            ["end_repeat", nil, nil, nil, nil, nil],
            ["note", "told", "Costs: ${cost}", nil, nil, nil],
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        let cost = try #require(F.field("cost", in: form))
        #expect(cost.label == "Cost for ${full_name}" && cost.hint == "Paid by ${full_name}" && cost.constraintMessage == "${full_name} pays less than 100")
        #expect(F.field("told", in: form)?.label == "Costs: ${defects.cost}")
        let state = FormState(logic: FormLogic(form: form), answers: ["full_name": .text("Ann"), "defects/a/@position": .integer(1), "defects/a/cost": .decimal(12.5)])
        #expect(state.text("Costs: ${defects.cost}", at: "told") == "Costs: 12.5")
        let unknown = try F.load(survey: [header, ["text", "a", "Hello ${nobody}", nil, nil, nil]])
        #expect(unknown.loaded == nil)
        #expect(unknown.findings.contains { $0.severity == .error && $0.cell == "survey!C2" && $0.message.contains("cannot show ${nobody}") }, "\(unknown.findings)")
    }

    /// Metadata a record keeps, referenced in labels and expressions (`${start}`, `${deviceid}`), reads the
    /// record's own (`record.start`, `record.device`); what FieldSheet does not read (a SIM's serial) reads as
    /// nothing, warned about.
    @Test func metadataReferencesReadTheRecordsOwn() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("start", "start"), F.row("today", "today"), F.row("deviceid", "deviceid"), F.row("username", "who"), F.row("simserial", "sim"),
            F.row("note", "told", "Started ${start} (${today}) on ${deviceid} by ${who}; SIM ${sim}."),
            F.row("date", "seen", "Seen", constraint: ". <= ${today}"),
            F.row("calculate", "late", calculation: "if(${start} > '2026-11-26T00:00' and ${sim} = '', 'yes', 'no')"),
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(F.field("told", in: form)?.label == "Started ${record.start} (${record.today}) on ${record.device} by ${record.user}; SIM .")
        #expect(F.field("seen", in: form)?.constraint == ". <= record.today")
        #expect(F.field("late", in: form)?.calculation == "if(record.start > '2026-11-26T00:00' and null == '', 'yes', 'no')")
        let warnings = result.findings.filter { $0.severity == .warning && $0.rule == "xlsform-metadata" }.map { $0.cell ?? "" }
        #expect(warnings.contains("survey!C7") && warnings.contains("survey!F9"), "\(warnings)")
        let state = FormState(logic: FormLogic(form: form), answers: [:], metadata: RecordMetadata(start: "2026-11-26T09:30", device: "tablet-7", user: "ann"))
        #expect(state.text("Started ${record.start} (${record.today}) on ${record.device} by ${record.user}; SIM .", at: "told")
                == "Started 2026-11-26 09:30 (2026-11-26) on tablet-7 by ann; SIM .")
        // A question of the form's own named record is read instead, so metadata cannot be: refused, naming the cell.
        let own = try F.load(survey: [F.header, F.row("start", "start"), F.row("text", "record", "Record"), F.row("note", "n", "At ${start}")])
        #expect(own.loaded == nil)
        #expect(own.findings.contains { $0.severity == .error && $0.cell == "survey!C4" && $0.message.contains("${start}") }, "\(own.findings)")
    }

    /// Types that are another kind with more to them: phone number (digits only, pyxform's hint), barcode
    /// (typed or pasted), range (bounds, and a step between whole numbers), hidden (a value from its default).
    @Test func phoneNumbersBarcodesRangesAndHiddenValuesImport() throws {
        let header: [String?] = ["type", "name", "label", "default", "parameters", "constraint"]
        let result = try F.load(survey: [
            header,
            ["phone number", "phone", "Phone", nil, nil, nil],
            ["barcode", "code", "Code", nil, nil, nil],
            ["range", "score", "Score", nil, "start=0 end=100 step=5", nil],
            ["range", "level", "Level", nil, "start=0 end=1 step=0.1", nil],
            ["range", "plain", "Plain", nil, nil, ". != 3"],
            ["hidden", "source", nil, "survey", nil, nil],
            ["hidden", "copied", nil, "${score}", nil, nil],
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        let phone = try #require(F.field("phone", in: form))
        #expect(phone.kind == .text && phone.pattern == "[0-9]*" && phone.hint == "Enter numbers only." && phone.patternMessage == "Enter numbers only.")
        #expect(F.field("code", in: form)?.kind == .text)
        let score = try #require(F.field("score", in: form))
        #expect(score.kind == .integer && score.min == 0 && score.max == 100 && score.constraint == "(. - 0) % 5 == 0")
        let level = try #require(F.field("level", in: form))
        #expect(level.kind == .decimal && level.min == 0 && level.max == 1 && level.constraint == nil)
        let plain = try #require(F.field("plain", in: form))
        #expect(plain.min == 1 && plain.max == 10 && plain.constraint == ". != 3")
        #expect(F.field("source", in: form)?.kind == .calculate && F.field("source", in: form)?.calculation == "'survey'")
        #expect(F.field("copied", in: form)?.calculation == "score")
        let validator = FormValidator(form: form)
        #expect(validator.validate(["score": .integer(10), "phone": .text("0123")]).issues.isEmpty)
        #expect(validator.validate(["score": .integer(7)]).issues.map(\.code) == [.constraint])
        #expect(validator.validate(["score": .integer(120)]).issues.count == 1)
        #expect(validator.validate(["phone": .text("+44 12")]).issues.map(\.code) == [.patternMismatch])
        let bad = try F.load(survey: [header, ["range", "r", "R", nil, "start=a", nil]])
        #expect(bad.findings.contains { $0.severity == .error && $0.cell == "survey!E2" && $0.rule == "xlsform-parameters" })
    }

    /// `rank LIST` imports as a rank over the list, `geotrace` and `geoshape` as trace and shape, and `area()` and
    /// `distance()` read them.
    @Test func ranksTracesAndShapesImport() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("rank colours", "order", "Order", required: "yes", default: "blue red"),
            F.row("geotrace", "path", "Path"),
            F.row("geoshape", "plot", "Plot"),
            F.row("calculate", "size", calculation: "round(area(${plot}), 0) + distance(${path})"),
        ], choices: [["list_name", "name", "label"], ["colours", "red", "Red"], ["colours", "blue", "Blue"]])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        let order = try #require(F.field("order", in: form))
        #expect(order.kind == .rank && order.choices?.map(\.value) == ["red", "blue"] && order.defaultValue == .choices(["blue", "red"]))
        #expect(F.field("path", in: form)?.kind == .trace && F.field("plot", in: form)?.kind == .shape)
        #expect(F.field("size", in: form)?.calculation == "round(area(plot), 0) + distance(path)")
        let missing = try F.load(survey: [F.header, F.row("rank", "order", "Order")])
        #expect(missing.findings.contains { $0.severity == .error && $0.cell == "survey!A2" }, "\(missing.findings)")
    }

    /// `select_one_external LIST` offers the list of the external_choices sheet (which ODK's tools attach to the form
    /// as itemsets.csv), its extra columns as properties a choice_filter reads; a list of the same name in the
    /// choices sheet is another list.
    @Test func anExternalSelectOffersTheExternalChoicesSheetsList() throws {
        let survey = F.text([F.header, F.row("select_one zone", "zone", "Zone"),
                             F.row("select_one_external type", "atype", "Type", choiceFilter: "zone=${zone}")])
        let choices = F.text([["list name", "name", "label"], ["zone", "north", "North"], ["zone", "south", "South"], ["type", "x", "Not this one"]])
        let external = F.text([["list name", "name", "label", "zone"], ["type", "a", "Type A", "north"], ["type", "b", "Type B", "south"]])
        let settings = F.text([["form_title", "form_id"], ["Zones", "zones"]])
        // Read from a file, as the commands read it (only the sheets the importer reads are read).
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("zones-\(UUID().uuidString).xlsx")
        try WorkbookWriter().write([("survey", survey), ("choices", choices), ("external_choices", external), ("settings", settings)]).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = XLSFormImporter().load(contentsOf: file.path)
        let form = try #require(result.loaded?.form, "\(result.findings)")
        let type = try #require(F.field("atype", in: form))
        #expect(type.kind == .singleChoice && type.choices?.map(\.value) == ["a", "b"] && type.choiceFilter == "choice.zone == zone")
        #expect(type.choices?.first?.properties?["zone"] == "north")
        #expect(!result.findings.contains { $0.cell == "external_choices" }, "the sheet is read, not warned about: \(result.findings)")
        #expect(result.findings.isEmpty, "\(result.findings)")
        let validator = FormValidator(form: form)
        #expect(validator.validate(["zone": .choice("south"), "atype": .choice("b")]).issues.isEmpty)
        #expect(validator.validate(["zone": .choice("south"), "atype": .choice("a")]).issues.map(\.code) == [.notAChoice])
        // A list the external_choices sheet does not have is refused naming the type's cell, as pyxform refuses it.
        let missing = try WorkbookWriter().write([("survey", F.text([F.header, F.row("select_one_external zone", "z", "Z")])), ("external_choices", external)])
        let refused = XLSFormImporter().load(try WorkbookReader().read(missing), file: "zones.xlsx")
        #expect(refused.loaded == nil)
        #expect(refused.findings.contains { $0.severity == .error && $0.cell == "survey!A2" && $0.message.contains("external_choices sheet") }, "\(refused.findings)")
    }

    /// `select_one LIST or_other` (and pyxform's older `… or specify other`): as pyxform converts it, the list
    /// gets the choice other ("Other") and the question a text NAME_other shown while other is chosen.
    @Test func aSelectOrOtherGetsTheOtherChoiceAndATextToSpecifyIt() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("select_one colors or_other", "fav", "Favourite"),
            F.row("select one from colors or specify other", "second", "Second"),
        ], choices: [["list_name", "name", "label"], ["colors", "red", "Red"], ["colors", "blue", "Blue"]])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(form.allFields.map(\.id) == ["fav", "fav_other", "second", "second_other"])
        #expect(F.field("fav", in: form)?.choices?.map(\.value) == ["red", "blue", "other"])
        #expect(F.field("second", in: form)?.choices?.last?.label == "Other")
        let other = try #require(F.field("fav_other", in: form))
        #expect(other.kind == .text && other.label == "Specify other." && other.relevant == "selected(fav, 'other')")
        let logic = FormLogic(form: form)
        #expect(FormState(logic: logic, answers: ["fav": .choice("other")]).isRelevant("fav_other"))
        #expect(!FormState(logic: logic, answers: ["fav": .choice("red")]).isRelevant("fav_other"))
    }

    /// A repeat_count written as an expression is computed, as pyxform computes it, in a calculate NAME_count
    /// before the repeat, which the repeat counts from.
    @Test func aRepeatCountExpressionIsComputedInACalculateTheRepeatCountsFrom() throws {
        let result = try F.load(survey: [
            F.header, F.row("integer", "n", "N"), F.row("begin_repeat", "r", "R", repeatCount: "${n} + 1"), F.row("text", "a", "A"), F.row("end_repeat", nil),
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(form.allFields.map(\.id) == ["n", "r_count", "r"])
        #expect(F.field("r_count", in: form)?.kind == .calculate && F.field("r_count", in: form)?.calculation == "n + 1")
        #expect(F.field("r", in: form)?.countFrom == "r_count")
        let validator = FormValidator(form: form)
        let one: [String: AnswerValue] = ["n": .integer(1), "r/x/@position": .integer(1), "r/x/a": .text("only")]
        #expect(validator.validate(one).issues.map(\.code) == [.tooFewInstances])
        var two = one
        two["r/y/@position"] = .integer(2)
        #expect(validator.validate(two).issues.isEmpty)
    }

    /// A form without form_title is titled as pyxform titles it: by its form_id, else by the file's name.
    @Test func aFormWithoutATitleIsTitledByItsIDAsPyxformTitlesIt() throws {
        let byID = try F.load(survey: [F.header, F.row("text", "a", "A")], settings: [["form_id"], ["household_survey"]])
        #expect(byID.loaded?.form.title == "household_survey", "\(byID.findings)")
        #expect(byID.loaded?.form.id == "household-survey")
        #expect(byID.findings.contains { $0.rule == "xlsform-title" && $0.severity == .warning && $0.cell == "settings!A2" && $0.fix.contains("form_title") })
        let byFile = try F.load(survey: [F.header, F.row("text", "a", "A")], settings: nil)
        #expect(byFile.loaded?.form.title == "form", "\(byFile.findings)")
        #expect(byFile.findings.contains { $0.rule == "xlsform-title" && $0.cell == "settings" && $0.message.contains("file's name") })
    }

    /// What published forms are written with: ODK's metadata spellings, notes without names, and quotes a
    /// spreadsheet's autocorrect curled inside expressions.
    @Test func publishedFormsHabitsImport() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("uri:deviceid", "device"),
            F.row("start-geopoint", "where_started"),
            F.row("select_one yn", "ok", "OK?"),
            F.row("note", nil, "Thank you"),
            F.row("text", "why", "Why", relevant: "${ok} = \u{2018}yes\u{2019}", constraint: ". != \u{201C}none\u{201D}"),
            F.row("text", "quote", "Quote", constraint: ". != 'it\u{2019}s'"),
        ], choices: [["list_name", "name", "label"], ["yn", "yes", "Yes"], ["yn", "no", "No"]])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(form.allFields.map(\.id) == ["ok", "generated_note_name_5", "why", "quote"])
        let note = try #require(F.field("generated_note_name_5", in: form))
        #expect(note.kind == .note && note.label == "Thank you")
        let why = try #require(F.field("why", in: form))
        #expect(why.relevant == "ok == 'yes'")
        #expect(why.constraint?.contains("none") == true && why.constraint?.contains("\u{201C}") == false)
        // A curly quote inside a straight-quoted string is the string's own: kept, and not warned about.
        #expect(F.field("quote", in: form)?.constraint?.contains("it\u{2019}s") == true)
        let warnings = result.findings.filter { $0.severity == .warning }.map { "\($0.cell ?? "") \($0.rule)" }
        #expect(warnings.contains("survey!A2 xlsform-metadata") && warnings.contains("survey!A3 xlsform-metadata"), "\(warnings)")
        #expect(warnings.filter { $0.hasSuffix("xlsform-curly-quotes") } == ["survey!D6 xlsform-curly-quotes", "survey!E6 xlsform-curly-quotes"])
        // A row without a name that is not a note is still refused.
        let unnamed = try F.load(survey: [F.header, F.row("text", nil, "A")])
        #expect(unnamed.loaded == nil)
        #expect(unnamed.findings.contains { $0.rule == "xlsform-name" && $0.cell == "survey!B2" })
    }

    /// XLSForm needs a name unique only within its group or repeat; FieldSheet stores the same name met again
    /// in another group under the parent's id and the name, so answers stay apart and their keys stay stable.
    @Test func theSameNameInAnotherGroupIsStoredUnderItsGroupsName() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("begin_group", "adult", "Adult"), F.row("integer", "age", "Age"), F.row("end_group", nil),
            F.row("begin_group", "child", "Child"), F.row("integer", "age", "Age"), F.row("end_group", nil),
            F.row("begin_repeat", "visit", "Visit"),
            F.row("begin_group", "adult", "Again"), F.row("date", "age", "When"), F.row("end_group", nil),
            F.row("text", "where", "Where", relevant: "${school} = 'x'"),
            F.row("end_repeat", nil),
            F.row("begin_group", "more", "More"), F.row("text", "school", "School"), F.row("end_group", nil),
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(form.pages.map(\.id) == ["adult", "child", "page_3", "more"])
        #expect(form.pages.map { $0.fields.map(\.id) } == [["age"], ["child_age"], ["visit"], ["school"]])
        #expect(F.field("visit", in: form)?.fields?.map(\.id) == ["visit_adult_age", "where"])
        #expect(F.field("visit_adult_age", in: form)?.kind == .date)
        let renamed = result.findings.filter { $0.rule == "xlsform-name" }
        #expect(renamed.map(\.severity) == [.warning, .warning, .warning])
        #expect(renamed.map(\.cell) == ["survey!B6", "survey!B9", "survey!B10"])
        #expect(renamed.first?.message.contains("also used at survey!B3") == true && renamed.first?.message.contains("stored as child_age") == true)
    }

    /// A name XLSForm takes that is no FieldSheet id is stored as one, and its references follow.
    @Test func aHyphenatedNameIsStoredWithUnderscores() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("text", "first-name", "First name"),
            F.row("text", "site.code", "Code", relevant: "${first-name} != ''"),
            F.row("note", "hello", "Hello ${first-name}"),
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(form.allFields.map(\.id) == ["first_name", "site_code", "hello"])
        #expect(F.field("site_code", in: form)?.relevant == "first_name != ''")
        #expect(F.field("hello", in: form)?.label == "Hello ${first_name}")
        #expect(result.findings.filter { $0.rule == "xlsform-name" }.map { "\($0.severity) \($0.cell ?? "")" } == ["warning survey!B2", "warning survey!B3"])
    }

    @Test func aQuestionLabelledOnlyByAnImageIsLabelledByItsFileName() throws {
        let result = try F.load(survey: [["type", "name", "label", "media::image"], ["note", "look", nil, "map.png"]])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(F.field("look", in: form)?.label == "map.png")
        #expect(result.findings.contains { $0.rule == "xlsform-label" && $0.severity == .warning && $0.cell == "survey!D2" })
        // In a form of several languages, the image of each language (`media::image::Français (fr)`, `image::…`).
        for base in ["media::image", "image"] {
            let bilingual = try F.load(survey: [
                ["type", "name", "label::English (en)", "label::Français (fr)", "\(base)::English (en)", "\(base)::Français (fr)"],
                ["text", "site", "Site", "Site visité", nil, nil],
                ["note", "look", nil, nil, "map-en.png", "carte-fr.png"],
            ])
            let look = try #require(bilingual.loaded.flatMap { F.field("look", in: $0.form) }, "\(bilingual.findings)")
            #expect(look.label.text(in: "English (en)") == "map-en.png" && look.label.text(in: "Français (fr)") == "carte-fr.png", "\(base): \(look.label)")
            #expect(bilingual.findings.contains { $0.rule == "xlsform-label" && $0.cell == "survey!E3" }, "\(bilingual.findings)")
        }
        // A sound or a video in one language only, as pyxform takes them: the file's name, warned about.
        let played = try F.load(survey: [["type", "name", "label", "media::audio::English (en)", "video::Français (fr)"],
                                         ["note", "hear", nil, "hello.mp3", nil], ["note", "watch", nil, nil, "clip.mp4"]])
        let playedForm = try #require(played.loaded?.form, "\(played.findings)")
        #expect(F.field("hear", in: playedForm)?.label == "hello.mp3" && F.field("watch", in: playedForm)?.label == "clip.mp4")
        #expect(played.findings.filter { $0.rule == "xlsform-label" }.map(\.message) == [
            "The question hear is labelled only by the audio hello.mp3, which FieldSheet does not play; its label is the file's name.",
            "The question watch is labelled only by the video clip.mp4, which FieldSheet does not play; its label is the file's name.",
        ])
    }

    @Test func aReferenceToANameOfTwoElementsAndARepeatNameUsedTwiceAreRefused() throws {
        let ambiguous = try F.load(survey: [
            F.header,
            F.row("begin_group", "a", "A"), F.row("text", "x", "X"), F.row("end_group", nil),
            F.row("begin_group", "b", "B"), F.row("text", "x", "X"), F.row("end_group", nil),
            F.row("text", "y", "Y", relevant: "${x} = 'q'"),
        ])
        #expect(ambiguous.loaded == nil)
        #expect(ambiguous.findings.contains { $0.severity == .error && $0.cell == "survey!D8" && $0.message.contains("${x} names 2 elements (survey!B3, survey!B6)") },
                "\(ambiguous.findings)")
        let repeats = try F.load(survey: [
            F.header,
            F.row("begin_group", "a", "A"), F.row("begin_repeat", "r", "R"), F.row("text", "p", "P"), F.row("end_repeat", nil), F.row("end_group", nil),
            F.row("begin_group", "b", "B"), F.row("begin_repeat", "r", "R"), F.row("text", "q", "Q"), F.row("end_repeat", nil), F.row("end_group", nil),
        ])
        #expect(repeats.loaded == nil)
        #expect(repeats.findings.contains { $0.severity == .error && $0.cell == "survey!B8" && $0.message.contains("unique in the whole survey") })
    }

    @Test func theConvertedDefinitionIsTheJSONAFormLoads() throws {
        let result = try F.load(survey: [F.header, F.row("text", "a", "A \"quoted\"\nline", relevant: ". != 'x'")])
        let definition = try #require(result.definition)
        let reloaded = FormLoader().load(Data(definition.utf8), file: "form.json")
        #expect(reloaded.loaded?.form == result.loaded?.form)
    }
}

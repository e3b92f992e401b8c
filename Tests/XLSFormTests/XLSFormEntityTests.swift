import Foundation
import FormModel
import Testing
@testable import XLSForm

/// XLSForm's entities sheet, `save_to`, `select_one_from_file LIST.csv` and `instance('LIST')/…` lookups.
struct XLSFormEntityTests {
    typealias F = WorkbookFixtures

    static func load(survey: [[String?]], entities: [[String?]]?, choices: [[String?]]? = nil) throws -> XLSFormImporter.Result {
        var sheets: [(name: String, rows: [[CellValue?]])] = [("survey", F.text(survey))]
        if let choices { sheets.append(("choices", F.text(choices))) }
        if let entities { sheets.append(("entities", F.text(entities))) }
        sheets.append(("settings", F.text([["form_title"], ["Entities"]])))
        return XLSFormImporter().load(try WorkbookReader().read(try WorkbookWriter().write(sheets)), file: "form.xlsx")
    }

    static let header: [String?] = ["type", "name", "label", "save_to", "calculation", "choice_filter"]

    @Test func aFollowUpFormImportsItsEntityDeclarationChoicesAndLookups() throws {
        let result = try Self.load(survey: [
            Self.header,
            ["select_one_from_file households.csv", "household", "Household", nil, nil, "village = ${village}"],
            ["text", "village", "Village", nil, nil, nil],
            ["calculate", "previous", nil, nil, "instance('households')/root/item[name=${household}]/members", nil],
            ["integer", "members", "Members", "households#members", nil, nil],
            ["csv-external", "households", nil, nil, nil, nil],
        ], entities: [["list_name", "entity_id", "update_if", "label"], ["households", "${household}", "${members} != ${previous}", "concat(${village}, '')"]])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(form.entity == EntityDeclaration(list: "households", label: "concat(village, '')", updateIf: "members != previous", entityID: "household"))
        let household = try #require(F.field("household", in: form))
        #expect(household.kind == .singleChoice && household.choicesFrom == ChoiceSource(entityList: "households") && household.choices == nil)
        #expect(household.choiceFilter == "choice.village == village")
        #expect(F.field("previous", in: form)?.calculation == "entity('households', household, 'members')")
        #expect(F.field("members", in: form)?.saveTo == "members")
        // Nothing warned about: not the entities sheet, save_to or csv-external.
        #expect(result.findings.isEmpty, "\(result.findings)")
    }

    /// `pulldata('LIST', 'column', 'name', key)` reads the row of LIST.csv named key: the same lookup as
    /// `instance('LIST')/root/item[name = key]/column`, the file LIST.csv being the entity list LIST as in
    /// `select_one_from_file`. A lookup in another column is refused naming the cell, with the lookup that reads.
    @Test func pulldataByNameIsAnEntityLookup() throws {
        let result = try Self.load(survey: [
            Self.header,
            ["calculate", "fruit", nil, nil, "pulldata('fruits', 'name','name', 'mango')", nil],
            ["text", "kind", "Kind", nil, nil, nil],
            ["calculate", "colour", nil, nil, "pulldata('fruits', 'colour', 'name', ${kind})", nil],
            ["note", "shown", "The fruit ${fruit} is ${colour}", nil, nil, nil],
        ], entities: nil)
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(F.field("fruit", in: form)?.calculation == "entity('fruits', 'mango', 'name')")
        #expect(F.field("colour", in: form)?.calculation == "entity('fruits', kind, 'colour')")
        let other = try Self.load(survey: [Self.header, ["text", "kind", "Kind", nil, nil, nil],
                                           ["calculate", "colour", nil, nil, "pulldata('fruits', 'colour', 'kind', ${kind})", nil]], entities: nil)
        #expect(other.loaded == nil)
        #expect(other.findings.contains { $0.severity == .error && $0.cell == "survey!E3" && $0.message.contains("by its column 'kind'")
            && $0.fix.contains("pulldata('fruits', 'colour', 'name', ${key})") }, "\(other.findings)")
    }

    static let refusals: [(String, [[String?]], [[String?]]?, String, String)] = [
        ("an unknown column", [header, ["text", "q1", "Q1", nil, nil, nil]], [["list_name", "label", "what"], ["e1", "${q1}", "!"]], "entities!C1", "not one XLSForm's entities sheet has"),
        ("a reference to no question", [header, ["text", "q1", "Q1", nil, nil, nil]], [["list_name", "label"], ["e1", "${q2}"]], "entities!B2", "${q2} names no question"),
        ("a second list", [header, ["text", "q1", "Q1", nil, nil, nil]], [["list_name", "label"], ["e1", "${q1}"], ["e2", "${q1}"]], "entities!A3", "a second entity list"),
        ("a list name with a period", [header, ["text", "q1", "Q1", nil, nil, nil]], [["list_name", "label"], ["e.1", "${q1}"]], "entities!A2", "not a name FieldSheet takes"),
        ("no list name", [header, ["text", "q1", "Q1", nil, nil, nil]], [["list_name", "label"], [nil, "${q1}"]], "entities!A2", "has no list_name"),
        ("an update without an entity id", [header, ["text", "q1", "Q1", nil, nil, nil]], [["list_name", "update_if"], ["e1", "${q1} != ''"]], "entities!B2", "does not say which"),
        ("save_to without entities", [header, ["text", "q1", "Q1", "p1", nil, nil]], nil, "survey!D2", "declares no entity list"),
        ("save_to twice", [header, ["text", "q1", "Q1", "p1", nil, nil], ["text", "q2", "Q2", "p1", nil, nil]], [["list_name", "label"], ["e1", "${q1}"]], "survey!D3", "already saved by the field \"q1\""),
        ("save_to on a group", [header, ["begin_group", "g", "G", "p1", nil, nil], ["text", "q1", "Q1", nil, nil, nil], ["end_group", nil, nil, nil, nil, nil]],
         [["list_name", "label"], ["e1", "${q1}"]], "survey!D2", "A group or repeat row"),
        ("save_to the entity's label", [header, ["text", "q1", "Q1", "label", nil, nil]], [["list_name", "label"], ["e1", "${q1}"]], "survey!D2", "the entity's own label"),
        ("save_to inside a repeat", [header, ["begin_repeat", "r", "R", nil, nil, nil], ["text", "q1", "Q1", "p1", nil, nil], ["end_repeat", nil, nil, nil, nil, nil]],
         [["list_name", "label"], ["e1", "concat('x', '')"]], "survey!D3", "not supported yet"),
        ("a lookup in a choices list", [header, ["select_one yes_no", "ok", "OK", nil, nil, nil], ["calculate", "c", nil, nil, "instance('yes_no')/root/item[name=${ok}]/label", nil]],
         nil, "survey!E3", "not an entity list"),
        ("choices from an XML file", [header, ["select_one_from_file trees.xml", "tree", "Tree", nil, nil, nil]], nil, "survey!A2", "no entity list"),
    ]

    @Test(arguments: refusals)
    func unsoundEntityFormsAreRefusedNamingTheCell(name: String, survey: [[String?]], entities: [[String?]]?, cell: String, message: String) throws {
        let choices: [[String?]]? = survey.contains { $0.first == "select_one yes_no" } ? [["list_name", "name", "label"], ["yes_no", "yes", "Yes"]] : nil
        let result = try Self.load(survey: survey, entities: entities, choices: choices)
        #expect(result.loaded == nil, "\(name)")
        #expect(result.findings.contains { $0.severity == .error && $0.cell == cell && $0.message.contains(message) }, "\(name): \(result.findings.map { "\($0.cell ?? "") \($0.message)" })")
    }
}

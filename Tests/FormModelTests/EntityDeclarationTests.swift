import Foundation
import Testing
@testable import FormModel

/// The form side of entity lists: `entity`, `saveTo`, `choicesFrom` and `entity(…)` lookups, and their checks.
struct EntityDeclarationTests {
    static let fields = """
        [{ "id": "household", "kind": "singleChoice", "label": "Household", "choicesFrom": { "entityList": "households" },
           "choiceFilter": "choice.village == village" },
         { "id": "village", "kind": "text", "label": "Village" },
         { "id": "head", "kind": "text", "label": "Head", "saveTo": "head_name" },
         { "id": "members", "kind": "integer", "label": "Members", "saveTo": "members",
           "default": { "expression": "entity('households', household, 'members')" } },
         { "id": "visits", "kind": "repeat", "label": "Visit", "fields": [{ "id": "day", "kind": "date", "label": "Day" }] }]
        """

    static func form(entity: String, fields: String = fields) -> String {
        Fixtures.formJSON(fields: fields, extra: "\n  \"entity\": \(entity),")
    }

    func errors(_ json: String) -> [(rule: String, path: String, message: String)] {
        Fixtures.load(json).findings.filter { $0.severity == .error }.map { ($0.rule, $0.path.description, $0.message) }
    }

    @Test func aFollowUpFormLoadsAndKeepsItsDeclarationThroughJSON() throws {
        let result = Fixtures.load(Self.form(entity: #"{ "list": "households", "entityId": "household", "updateIf": "members > 0", "label": "concat(head, ' ', village)" }"#))
        let form = try #require(result.loaded?.form, "\(result.findings)")
        let entity = try #require(form.entity)
        #expect(entity == EntityDeclaration(list: "households", label: "concat(head, ' ', village)", updateIf: "members > 0", entityID: "household"))
        #expect(entity.updates && !entity.creates)
        #expect(form.field("household")?.choicesFrom == ChoiceSource(entityList: "households"))
        #expect(form.field("members")?.saveTo == "members")
        let again = try JSONDecoder().decode(FormDefinition.self, from: JSONEncoder().encode(form))
        #expect(again == form)
    }

    @Test func whatARecordDoesFollowsODKsTable() {
        #expect(EntityDeclaration(list: "l", label: "x").creates && !EntityDeclaration(list: "l", label: "x").updates)
        let upsert = EntityDeclaration(list: "l", label: "x", createIf: "a", updateIf: "b", entityID: "c")
        #expect(upsert.creates && upsert.updates)
    }

    @Test func anUnsoundDeclarationIsRefusedAtItsPath() {
        #expect(errors(Self.form(entity: #"{ "list": "households", "updateIf": "members > 0", "label": "head" }"#)).map(\.rule) == ["entity-update-without-id"])
        #expect(errors(Self.form(entity: #"{ "list": "households", "updateIf": "members > 0", "label": "head" }"#)).first?.path == "$.entity.updateIf")
        let upsert = errors(Self.form(entity: #"{ "list": "households", "entityId": "household", "createIf": "members > 0", "label": "head" }"#))
        #expect(upsert.map(\.rule) == ["entity-create-without-update-if"] && upsert.first?.path == "$.entity.createIf")
        let unlabelled = errors(Self.form(entity: #"{ "list": "households" }"#))
        #expect(unlabelled.map(\.rule) == ["entity-label-missing"] && unlabelled.first?.path == "$.entity")
        let unknown = errors(Self.form(entity: #"{ "list": "households", "label": "concat(nobody, '')" }"#))
        #expect(unknown.map(\.rule) == ["entity-unknown-field"] && unknown.first?.path == "$.entity.label", "\(unknown)")
        let inRepeat = errors(Self.form(entity: #"{ "list": "households", "label": "day" }"#))
        #expect(inRepeat.map(\.rule) == ["repeat-scope"], "\(inRepeat)")
        #expect(errors(Self.form(entity: #"{ "list": "house.holds", "label": "head" }"#)).first?.path == "$.entity.list")
        #expect(errors(Self.form(entity: #"{ "list": "__households", "label": "head" }"#)).map(\.rule) == ["entity-list-name"])
        #expect(errors(Self.form(entity: #"{ "list": "households", "label": "entity('households', head, 'name')" }"#)).isEmpty)
    }

    @Test func savingToAPropertyTwiceOrToTheEntitysOwnIsRefusedNamingBothFields() {
        let twice = Self.fields.replacingOccurrences(of: #""saveTo": "head_name""#, with: #""saveTo": "members""#)
        let found = errors(Self.form(entity: #"{ "list": "households", "label": "head" }"#, fields: twice))
        #expect(found.map(\.rule) == ["save-to-duplicate"], "\(found)")
        #expect(found.first?.path == "$.pages[0].fields[3].saveTo")
        #expect(found.first?.message == "The entity property \"members\" is already saved by the field \"head\" ($.pages[0].fields[2])." )
        let reserved = Self.fields.replacingOccurrences(of: #""saveTo": "head_name""#, with: #""saveTo": "Label""#)
        #expect(errors(Self.form(entity: #"{ "list": "households", "label": "head" }"#, fields: reserved)).map(\.rule) == ["save-to-reserved"])
        let inRepeat = Self.fields.replacingOccurrences(of: #""label": "Day" }"#, with: #""label": "Day", "saveTo": "day" }"#)
        #expect(errors(Self.form(entity: #"{ "list": "households", "label": "head" }"#, fields: inRepeat)).map(\.rule) == ["save-to-in-repeat"])
        let noEntity = errors(Fixtures.formJSON(fields: Self.fields))
        #expect(noEntity.map(\.rule) == ["save-to-without-entity", "save-to-without-entity"])
        #expect(noEntity.first?.path == "$.pages[0].fields[2].saveTo")
    }

    @Test func choicesComeFromTheListOrTheFieldNotBoth() {
        let both = Self.fields.replacingOccurrences(of: #""choicesFrom": { "entityList": "households" },"#,
                                                    with: #""choicesFrom": { "entityList": "households" }, "choices": [{ "value": "a", "label": "A" }],"#)
        #expect(errors(Self.form(entity: #"{ "list": "households", "label": "head" }"#, fields: both)).map(\.rule) == ["choices-and-choices-from"])
        let onText = #"[{ "id": "x", "kind": "text", "label": "X", "choicesFrom": { "entityList": "households" } }]"#
        #expect(errors(Fixtures.formJSON(fields: onText)).map(\.rule) == ["option-not-for-kind"])
        let neither = #"[{ "id": "x", "kind": "singleChoice", "label": "X" }]"#
        #expect(!errors(Fixtures.formJSON(fields: neither)).isEmpty)
    }

    @Test func anEntityLookupIsANodeOfItsOwnThatReadsNothingYet() throws {
        let expression = try FormExpression.parse("entity('households', household, 'members') + 1")
        guard case .arithmetic(.entity(let list, let id, let property), _) = expression else {
            Issue.record("not an entity node: \(expression)")
            return
        }
        #expect(list == "households" && id == .name(["household"]) && property == "members")
        #expect(expression.referencedNames == [["household"]])
        #expect(throws: ExpressionSyntaxError.self) { try FormExpression.parse("entity('households', household)") }
        #expect(throws: ExpressionSyntaxError.self) { try FormExpression.parse("entity(households, household, 'members')") }
        let form = try #require(Fixtures.load(Self.form(entity: #"{ "list": "households", "label": "head" }"#)).loaded?.form)
        let state = FormState(form: form, answers: ["household": .choice("h-1")])
        #expect(state.value("members") == nil)
    }

    @Test func aChoiceFromAnEntityListIsTypedAsTheEntitysID() throws {
        let form = try #require(Fixtures.load(Self.form(entity: #"{ "list": "households", "label": "head" }"#)).loaded?.form)
        let field = try #require(form.field("household"))
        #expect(AnswerValue.parse("h-17", for: field) == .choice("h-17"))
        let validator = FormValidator(form: form)
        #expect(validator.validate(field: "household", in: ["household": .choice("h-17"), "village": .text("Kibera")]).isEmpty)
        #expect(FormState(form: form, answers: [:]).choices(for: "household").isEmpty)
    }
}

/// The record's reserved `__entity` key: taken as text by a form that saves to a list, unknown to any other.
struct EntityChangeKeyTests {
    @Test func aFormThatSavesToAListTakesTheEntityChangeAsText() throws {
        let saving = try #require(Fixtures.load(EntityDeclarationTests.form(entity: #"{ "list": "households", "label": "head" }"#)).loaded?.form)
        let validator = FormValidator(form: saving)
        #expect(validator.draftIssue(AnswerKey.entityChange, .text("{}")) == nil)
        #expect(validator.draftIssue(AnswerKey.entityChange, .integer(3))?.code == .wrongType)
        let report = validator.validate([AnswerKey.entityChange: .text("{}")])
        #expect(!report.issues.contains { $0.fieldID == AnswerKey.entityChange })
    }

    @Test func aFormThatSavesToNoListRefusesTheKey() throws {
        let plain = try #require(Fixtures.load(Fixtures.formJSON(fields: #"[{ "id": "head", "kind": "text", "label": "Head" }]"#)).loaded?.form)
        let validator = FormValidator(form: plain)
        #expect(validator.draftIssue(AnswerKey.entityChange, .text("{}"))?.code == .unknownField)
        #expect(validator.validate([AnswerKey.entityChange: .text("{}")]).issues.map(\.code) == [.unknownField])
    }
}

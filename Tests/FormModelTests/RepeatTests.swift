import Foundation
import Testing
@testable import FormModel

/// Repeat groups, calculations, constraints and choice filters over the example "Site Inspection: Defects".
struct RepeatTests {
    static func form() throws -> FormDefinition {
        let result = FormLoader().load(contentsOf: Fixtures.path("Schema/forms/defect-inspection.json"))
        return try #require(result.loaded?.form, "\(result.findings)")
    }

    static func instance(_ id: String, position: Int, _ values: [String: AnswerValue], group: String = "defects") -> [String: AnswerValue] {
        var answers = ["\(group)/\(id)/@position": AnswerValue.integer(position)]
        for (field, value) in values { answers["\(group)/\(id)/\(field)"] = value }
        return answers
    }

    @Test func aFlatKeyIsLookedUpAsAnAnswerKeyIs() throws {
        let fields = FormFields(form: try Self.form())
        let keys = fields.order + fields.order.map { "defects/a/\($0)" } + ["", "@position", "@removed", "defects/a/@position", "nope", "defects//x", "/site"]
        for key in keys {
            #expect(fields.definition(ofKey: key)?.id == AnswerKey(key).flatMap(fields.definition(of:))?.id, "\(key)")
        }
        // A field of a repeat is not a top-level key; the repeat itself is.
        let inside = try #require(fields.container.keys.first)
        #expect(fields.definition(ofKey: inside) == nil)
        let group = try #require(fields.container[inside])
        #expect(fields.definition(ofKey: group)?.kind == .repeat)
    }

    @Test func aKeysFactsAreThoseOfTheDefinitionItsKeyFinds() throws {
        let fields = FormFields(form: try Self.form())
        let keys = fields.order + fields.order.map { "defects/a/\($0)" } + ["", "@position", "@removed", "defects/a/@position", "nope", "defects//x", "/site"]
        var found = 0
        for key in keys {
            let definition = fields.definition(ofKey: key)
            let facts = fields.facts(ofKey: key)
            #expect((facts == nil) == (definition == nil), "\(key)")
            #expect(facts?.sensitive == definition?.sensitive, "\(key)")
            #expect(facts?.isComputed == definition?.isComputed, "\(key)")
            if facts?.isComputed == true { found += 1 }
        }
        // The form has computed fields, so both flags were compared both ways.
        #expect(found > 0)
    }

    @Test func instancesAreFoundFromTheKeysInTheirOrder() {
        var answers = Self.instance("b", position: 2, ["location": .text("Roof")])
        answers.merge(Self.instance("a", position: 1, ["location": .text("Cellar")])) { $1 }
        answers.merge(Self.instance("c", position: 2, [:])) { $1 }
        answers["defects/d/location"] = .text("Gone")
        answers["defects/d/@removed"] = .boolean(true)
        let instances = RepeatInstances(answers: answers)
        #expect(instances.live("defects").map(\.id) == ["a", "b", "c"])
        #expect(instances.all("defects").map(\.id) == ["a", "b", "c", "d"])
        #expect(instances.nextPosition("defects") == 3)
    }

    @Test func calculationsReadInstancesAndHiddenFieldsCountAsUnanswered() throws {
        let form = try Self.form()
        var answers: [String: AnswerValue] = ["site": .text("Depot")]
        answers.merge(Self.instance("a", position: 1, ["severity": .choice("high"), "cost": .decimal(1500), "urgent_note": .text("Water")])) { $1 }
        answers.merge(Self.instance("b", position: 2, ["severity": .choice("low"), "cost": .decimal(20), "urgent_note": .text("stale")])) { $1 }
        let state = FormState(form: form, answers: answers)
        #expect(state.value("defect_count") == .integer(2))
        #expect(state.value("total_cost") == .decimal(1520))
        // b's urgent note is hidden (severity low), so only a's counts.
        #expect(state.value("high_count") == .integer(1))
        #expect(state.value("summary") == .text("2 defects, 1 urgent"))
        #expect(!state.isRelevant("defects/b/urgent_note"))
        #expect(state.isRelevant("defects/a/urgent_note"))
    }

    @Test func theChoiceFilterOffersTheActionsOfTheInstancesSeverity() throws {
        let form = try Self.form()
        let answers = Self.instance("a", position: 1, ["severity": .choice("high")]).merging(Self.instance("b", position: 2, ["severity": .choice("low")])) { $1 }
        let state = FormState(form: form, answers: answers)
        #expect(state.choices(for: "defects/a/action").map(\.value) == ["repair_now", "close_site", "photograph"])
        #expect(state.choices(for: "defects/b/action").map(\.value) == ["note", "photograph"])
    }

    /// The shape revision moves when a field is shown or hidden or an instance comes or goes, and only then.
    @Test func theShapeRevisionMovesWithWhatIsShownOnly() throws {
        var state = FormState(form: try Self.form(), answers: Self.instance("a", position: 1, ["severity": .choice("low")]))
        var shape = state.shapeRevision
        state.apply(["defects/a/location": .text("Roof"), "defects/a/cost": .decimal(20)])
        #expect(state.shapeRevision == shape, "typing a location or a cost shows and hides nothing")
        state.apply(["defects/a/severity": .choice("medium")])
        #expect(state.shapeRevision == shape, "still no urgent note at medium")
        state.apply(["defects/a/severity": .choice("high")])
        #expect(state.shapeRevision != shape, "high shows the urgent note")
        shape = state.shapeRevision
        state.apply(["defects/b/@position": .integer(2)])
        #expect(state.shapeRevision != shape, "a new instance")
        shape = state.shapeRevision
        state.apply(["defects/b/@removed": .boolean(true)])
        #expect(state.shapeRevision != shape, "a removed instance")
    }

    @Test func completionChecksEveryInstanceConstraintsAndFilters() throws {
        let form = try Self.form()
        var answers: [String: AnswerValue] = ["site": .text("Depot"), "inspected_on": .date("2026-11-23"), "next_visit": .date("2026-11-01")]
        answers.merge(Self.instance("a", position: 1, ["location": .text("Roof"), "severity": .choice("low"), "action": .choice("repair_now"), "cost": .decimal(2000)])) { $1 }
        answers.merge(Self.instance("b", position: 2, ["location": .text("Cellar"), "severity": .choice("high"), "action": .choice("close_site")])) { $1 }
        let report = FormValidator(form: form).validate(answers)
        let byKey = Dictionary(grouping: report.issues, by: \.fieldID).mapValues { $0.map(\.code) }
        #expect(byKey["next_visit"] == [.constraint])
        #expect(report.issues(for: "next_visit").first?.message == "The next visit must come after the inspection.")
        #expect(byKey["defects/a/action"] == [.notAChoice])
        #expect(byKey["defects/a/cost"] == [.constraint])
        #expect(byKey["defects/b/urgent_note"] == [.required])
        #expect(byKey.count == 4, "\(report.issues)")
        answers["next_visit"] = .date("2026-12-01")
        answers["defects/a/action"] = .choice("note")
        answers["defects/a/cost"] = .decimal(200)
        answers["defects/b/urgent_note"] = .text("Water in the panel")
        #expect(FormValidator(form: form).validate(answers).isValid, "\(FormValidator(form: form).validate(answers).issues)")
        // A removed instance is not checked; computed fields cannot be written.
        answers["defects/b/urgent_note"] = nil
        answers["defects/b/@removed"] = .boolean(true)
        answers["total_cost"] = .decimal(1)
        #expect(FormValidator(form: form).validate(answers).issues.map(\.code) == [.readOnly])
    }

    @Test func instanceCountsFollowMinMaxAndCountFrom() throws {
        let json = Fixtures.formJSON(fields: """
            [{ "id": "members", "kind": "integer", "label": "Members" },
             { "id": "people", "kind": "repeat", "label": "People", "instanceLabel": "Person", "countFrom": "members",
               "fields": [{ "id": "name", "kind": "text", "label": "Name" }] },
             { "id": "rooms", "kind": "repeat", "label": "Rooms", "minCount": 1, "maxCount": 2,
               "fields": [{ "id": "room", "kind": "text", "label": "Room" }] }]
            """)
        let form = try #require(Fixtures.load(json).loaded?.form)
        var answers: [String: AnswerValue] = ["members": .integer(2)]
        answers.merge(Self.instance("p1", position: 1, ["name": .text("Ana")], group: "people")) { $1 }
        let report = FormValidator(form: form).validate(answers)
        #expect(report.issues.map(\.code) == [.tooFewInstances, .tooFewInstances])
        #expect(report.issues.first?.message == "Add 1 more person: at least 2 are needed, 1 is there.")
        for id in ["r1", "r2", "r3"] { answers.merge(Self.instance(id, position: 1, [:], group: "rooms")) { $1 } }
        answers.merge(Self.instance("p2", position: 2, [:], group: "people")) { $1 }
        #expect(FormValidator(form: form).validate(answers).issues.map(\.code) == [.tooManyInstances])
    }

    @Test func defaultsEvaluateExpressions() throws {
        let defaults = FormValidator(form: try Self.form()).defaults
        guard case .date(let day)? = defaults["inspected_on"] else {
            Issue.record("no date default: \(defaults)")
            return
        }
        #expect(LocalDateTime.isDate(day))
    }

    @Test func nestedRepeatsReadTheirOwnAndTheEnclosingInstance() throws {
        let json = Fixtures.formJSON(fields: """
            [{ "id": "rooms", "kind": "repeat", "label": "Rooms", "fields": [
                { "id": "room", "kind": "text", "label": "Room" },
                { "id": "items", "kind": "repeat", "label": "Items", "fields": [
                    { "id": "price", "kind": "decimal", "label": "Price" },
                    { "id": "tag", "kind": "text", "label": "Tag", "calculation": "concat(room, ':', price)" }]},
                { "id": "room_total", "kind": "decimal", "label": "Room total", "calculation": "sum(items.price)" }]},
             { "id": "total", "kind": "decimal", "label": "Total", "calculation": "sum(rooms.room_total)" }]
            """)
        let form = try #require(Fixtures.load(json).loaded?.form, "\(Fixtures.load(json).findings)")
        let answers: [String: AnswerValue] = [
            "rooms/r1/@position": .integer(1), "rooms/r1/room": .text("Hall"),
            "rooms/r1/items/i1/price": .decimal(2), "rooms/r1/items/i2/price": .decimal(3),
            "rooms/r2/@position": .integer(2), "rooms/r2/room": .text("Loft"), "rooms/r2/items/i3/price": .decimal(10),
        ]
        let state = FormState(form: form, answers: answers)
        #expect(state.value("rooms/r1/room_total") == .decimal(5))
        #expect(state.value("total") == .decimal(15))
        #expect(state.value("rooms/r2/items/i3/tag") == .text("Loft:10"))
    }

    /// After any edits, the state updated incrementally equals one evaluated from scratch.
    @Test func incrementalUpdatesAgreeWithAFullEvaluation() throws {
        let form = try Self.form()
        let logic = FormLogic(form: form)
        var generator = SplitMix64(seed: UInt64.random(in: 0...UInt64.max))
        print("RepeatTests incremental seed: \(generator.seed)")
        let clock = ExpressionClock(today: "2026-11-23", now: "2026-11-23T10:00")
        var state = FormState(logic: logic, answers: [:], clock: clock)
        let ids = ["a", "b", "c", "d"]
        let severities = ["low", "medium", "high"]
        for step in 0..<400 {
            let id = ids[Int(generator.next() % 4)]
            var edits: [String: AnswerValue?] = [:]
            switch generator.next() % 6 {
            case 0: edits["defects/\(id)/@position"] = .integer(Int(generator.next() % 5))
            case 1: edits["defects/\(id)/@removed"] = .boolean(generator.next() % 2 == 0)
            case 2: edits["defects/\(id)/severity"] = .choice(severities[Int(generator.next() % 3)])
            case 3: edits["defects/\(id)/cost"] = generator.next() % 4 == 0 ? nil : .decimal(Decimal(Int(generator.next() % 500)))
            case 4: edits["defects/\(id)/urgent_note"] = .text("n\(step)")
            default: edits["site"] = .text("s\(step)")
            }
            state.apply(edits)
            let full = FormState(logic: logic, answers: state.answers, clock: clock)
            #expect(state.computed == full.computed, "seed \(generator.seed) step \(step)")
            #expect(state.hidden == full.hidden, "seed \(generator.seed) step \(step)")
            #expect(state.instances == full.instances, "seed \(generator.seed) step \(step)")
        }
    }
}

import Foundation
import Testing
@testable import FormModel

struct FormLinterTests {
    func loaded(_ json: String, file: String) throws -> LoadedForm {
        let result = Fixtures.load(json, file: file)
        return try #require(result.loaded, "\(result.findings)")
    }

    func form(_ properties: String, id: String = "f", fields: Int = 1, pages: Int = 1) -> String {
        let fieldList = (0..<fields).map { #"{ "id": "f\#($0)", "kind": "text", "label": "F\#($0)" }"# }.joined(separator: ", ")
        let pageList = (0..<pages).map { #"{ "id": "p\#($0)", "title": "Step \#($0)", "fields": [\#(fieldList.replacingOccurrences(of: "\"f", with: "\"p\($0)f"))] }"# }.joined(separator: ", ")
        return #"{ "id": "\#(id)", "version": 1, \#(properties), "pages": [\#(pageList)] }"#
    }

    @Test func theExampleFormsAreClean() {
        let findings = FormLinter().lint(files: Fixtures.exampleForms)
        #expect(findings.isEmpty, "\(findings)")
    }

    @Test func aFormWithoutATitleIsRejected() {
        let findings = FormLinter().lint(files: [Fixtures.path("Tests/schema/invalid/missing-title.json")])
        #expect(findings.hasErrors)
        #expect(findings.contains { $0.message.contains("\"title\"") && $0.fix.contains("Names the task") })
    }

    @Test func aBlankTitleIsRejected() throws {
        let findings = FormLinter().lint([try loaded(form(#""title": "  ", "completionLabel": "Add""#), file: "a.json")])
        #expect(findings.map(\.rule) == ["title-missing"])
    }

    @Test func aVagueDoneLabelIsAWarning() throws {
        let findings = FormLinter().lint([try loaded(form(#""title": "Add Part", "completionLabel": "Done""#), file: "a.json")])
        #expect(findings.map(\.rule) == ["vague-completion-label"])
        #expect(findings.first?.severity == .warning)
        #expect(!findings.hasErrors)
    }

    @Test func cancelAndCompletionMustDiffer() throws {
        let findings = FormLinter().lint([try loaded(form(#""title": "Add Part", "completionLabel": "Cancel", "cancelLabel": "Cancel""#), file: "a.json")])
        #expect(findings.contains { $0.rule == "cancel-missing" && $0.severity == .error })
    }

    @Test func twoPopoversStackedAreRejected() throws {
        let filter = try loaded(form(#""title": "Filter Jobs", "presentation": "popover", "anchor": "filter", "completionLabel": "Apply""#, id: "filter-jobs"), file: "filter.json")
        let more = try loaded(form(#""title": "More Filters", "presentation": "popover", "anchor": "more", "parent": "filter-jobs", "completionLabel": "Apply""#, id: "more"), file: "more.json")
        let findings = FormLinter().lint([filter, more])
        let finding = try #require(findings.first { $0.rule == "popover-stacked" })
        #expect(finding.severity == .error)
        #expect(finding.file == "more.json")
        #expect(finding.path.description == "$.parent")
        #expect(finding.location != nil)
    }

    @Test func aSheetFromAPopoverIsAWarningThatThePopoverClosesFirst() throws {
        let filter = try loaded(form(#""title": "Filter Jobs", "presentation": "popover", "anchor": "filter", "completionLabel": "Apply""#, id: "filter-jobs"), file: "filter.json")
        let sheet = try loaded(form(#""title": "Save Filter", "parent": "filter-jobs", "completionLabel": "Save Filter""#, id: "save"), file: "save.json")
        let findings = FormLinter().lint([filter, sheet])
        #expect(findings.map(\.rule) == ["modal-from-popover"])
        #expect(!findings.hasErrors)
    }

    @Test func popoversStayShortSingleStepAndAnchored() throws {
        let long = try loaded(form(#""title": "Quick", "presentation": "popover", "completionLabel": "Add""#, fields: 7, pages: 2), file: "a.json")
        let rules = Set(FormLinter().lint([long]).map(\.rule))
        #expect(rules == ["popover-multi-step", "popover-too-long", "popover-anchor-missing"])
    }

    @Test func currentContextNeedsASplitViewPane() throws {
        let bad = try loaded(form(#""title": "Filter Jobs", "presentation": "currentContext", "completionLabel": "Apply""#), file: "a.json")
        #expect(FormLinter().lint([bad]).map(\.rule) == ["current-context-without-split-view"])
        let good = try loaded(form(#""title": "Filter Jobs", "presentation": "currentContext", "pane": "list", "completionLabel": "Apply""#), file: "b.json")
        #expect(FormLinter().lint([good]).isEmpty)
    }

    @Test func oneTransitionAcrossTheSetUnlessAFormSaysWhy() throws {
        let a = try loaded(form(#""title": "A Job", "completionLabel": "Create""#, id: "a"), file: "a.json")
        let b = try loaded(form(#""title": "B Job", "completionLabel": "Create""#, id: "b"), file: "b.json")
        let odd = try loaded(form(#""title": "C Job", "completionLabel": "Create", "transition": "flipHorizontal""#, id: "c"), file: "c.json")
        let findings = FormLinter().lint([a, b, odd])
        #expect(findings.map(\.rule) == ["transition-inconsistent"])
        #expect(findings.first?.file == "c.json")
        let explained = try loaded(form(#""title": "C Job", "completionLabel": "Create", "transition": "flipHorizontal", "transitionReason": "Shows the back of the job card""#, id: "c"), file: "c.json")
        #expect(FormLinter().lint([a, b, explained]).isEmpty)
    }

    @Test func multiStepFormsNameTheirSteps() throws {
        let json = #"{ "id": "m", "version": 1, "title": "Survey", "completionLabel": "Submit", "presentation": "fullScreen", "pages": [{ "id": "a", "fields": [{ "id": "x", "kind": "text", "label": "X" }] }, { "id": "b", "title": "Two", "fields": [{ "id": "y", "kind": "text", "label": "Y" }] }] }"#
        let findings = FormLinter().lint([try loaded(json, file: "m.json")])
        #expect(findings.map(\.rule) == ["step-title-missing"])
        #expect(findings.first?.path.description == "$.pages[0]")
    }
}
